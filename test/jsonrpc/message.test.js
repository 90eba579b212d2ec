// Pure JSON-RPC 2.0 classification, response builders and MCP protocol-version helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  RpcError,
  classify,
  errorResponse,
  isExactId,
  isRecord,
  resultResponse,
} from '../../dist/jsonrpc/message.js';
import {
  ASSUMED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  allowsBatches,
  negotiate,
} from '../../dist/mcp/protocol.js';

test('error codes are the JSON-RPC 2.0 ones', () => {
  assert.deepEqual([PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR], [-32700, -32600, -32601, -32602, -32603]);
});

test('isRecord: plain objects only', () => {
  assert.equal(isRecord({}), true);
  for (const v of [null, [], 'x', 1, true, undefined]) assert.equal(isRecord(v), false, JSON.stringify(v));
});

test('requests: string and number ids, including 0 and the empty string', () => {
  for (const id of [0, 1, -3, 2.5, '', 'abc']) {
    assert.deepEqual(classify({ jsonrpc: '2.0', id, method: 'ping' }), { kind: 'request', id, method: 'ping', params: undefined });
  }
  assert.deepEqual(classify({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { a: 1 } }), {
    kind: 'request',
    id: 0,
    method: 'tools/list',
    params: { a: 1 },
  });
  assert.deepEqual(classify({ jsonrpc: '2.0', id: 7, method: 'x', params: [1, 2] }).params, [1, 2]);
});

test('notifications: a method without an id', () => {
  assert.deepEqual(classify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
    kind: 'notification',
    method: 'notifications/initialized',
    params: undefined,
  });
  assert.deepEqual(classify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0 } }), {
    kind: 'notification',
    method: 'notifications/cancelled',
    params: { requestId: 0 },
  });
});

test('responses: result or error (not both) with an id, including 0 and null', () => {
  for (const message of [
    { jsonrpc: '2.0', id: 0, result: {} },
    { jsonrpc: '2.0', id: 'a', result: null },
    { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'no' } },
    { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error', data: 1 } },
  ]) {
    assert.deepEqual(classify(message), { kind: 'response' }, JSON.stringify(message));
  }
});

test('invalid messages say why, and keep a usable id', () => {
  const cases = [
    [null, null, /must be an object/],
    [[], null, /must be an object/],
    ['ping', null, /must be an object/],
    [42, null, /must be an object/],
    [{ id: 1, method: 'ping' }, 1, /jsonrpc must be "2.0"/],
    [{ jsonrpc: '1.0', id: 0, method: 'ping' }, 0, /jsonrpc must be "2.0"/],
    [{ jsonrpc: 2, id: 'x', method: 'ping' }, 'x', /jsonrpc must be "2.0"/],
    [{ jsonrpc: '2.0', id: 0, method: 5 }, 0, /method must be a string/],
    [{ jsonrpc: '2.0', id: 4, method: 'ping', params: 'x' }, 4, /params must be an object or an array/],
    [{ jsonrpc: '2.0', method: 'n', params: null }, null, /params must be an object or an array/],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, null, /id must be a string or a number/],
    [{ jsonrpc: '2.0', id: {}, method: 'ping' }, null, /id must be a string or a number/],
    [{ jsonrpc: '2.0', id: true, method: 'ping' }, null, /id must be a string or a number/],
    [{ jsonrpc: '2.0', id: 1 }, 1, /not a request, notification or response/],
    [{ jsonrpc: '2.0', result: {} }, null, /not a request, notification or response/],
    [{ jsonrpc: '2.0', id: 1, result: 1, error: { code: 1, message: 'x' } }, 1, /not a request, notification or response/],
    [{ jsonrpc: '2.0', id: [1], result: 1 }, null, /not a request, notification or response/],
    [{ jsonrpc: '2.0', id: 0, error: 'boom' }, 0, /numeric code and a string message/],
    [{ jsonrpc: '2.0', id: 2, error: { code: '1', message: 'x' } }, 2, /numeric code and a string message/],
    [{ jsonrpc: '2.0', id: 2, error: { code: 1 } }, 2, /numeric code and a string message/],
    [{ jsonrpc: '2.0' }, null, /not a request, notification or response/],
  ];
  for (const [value, id, reason] of cases) {
    const message = classify(value);
    assert.equal(message.kind, 'invalid', JSON.stringify(value));
    assert.equal(message.id, id, JSON.stringify(value));
    assert.match(message.reason, reason, JSON.stringify(value));
  }
});

test('a non-finite numeric id is not an id', () => {
  // JSON cannot carry these, but the classifier must not trust numbers blindly
  assert.equal(classify({ jsonrpc: '2.0', id: NaN, method: 'ping' }).kind, 'invalid');
  assert.equal(classify({ jsonrpc: '2.0', id: Infinity, method: 'ping' }).kind, 'invalid');
});

test('response builders', () => {
  assert.deepEqual(errorResponse(0, INVALID_PARAMS, 'bad'), { jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'bad' } });
  assert.deepEqual(errorResponse(null, PARSE_ERROR, 'p', { at: 3 }), {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'p', data: { at: 3 } },
  });
  assert.ok(!('data' in errorResponse('a', 1, 'm').error));
  assert.deepEqual(resultResponse(0, {}), { jsonrpc: '2.0', id: 0, result: {} });
});

test('RpcError carries its code and data', () => {
  const err = new RpcError(METHOD_NOT_FOUND, 'Method not found: x', { hint: 1 });
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'RpcError');
  assert.equal(err.rpcCode, -32601);
  assert.equal(err.message, 'Method not found: x');
  assert.deepEqual(err.data, { hint: 1 });
});

test('protocol versions: the three supported revisions, latest 2025-11-25, absent header means 2025-03-26', () => {
  assert.deepEqual([...SUPPORTED_PROTOCOL_VERSIONS].sort(), ['2025-03-26', '2025-06-18', '2025-11-25']);
  assert.equal(LATEST_PROTOCOL_VERSION, '2025-11-25');
  assert.equal(ASSUMED_PROTOCOL_VERSION, '2025-03-26');
});

test('negotiate echoes a supported version and answers the latest otherwise', () => {
  for (const v of ['2025-03-26', '2025-06-18', '2025-11-25']) assert.equal(negotiate(v), v);
  for (const v of ['2024-11-05', '2099-01-01', '', undefined, null, 20250326, {}]) assert.equal(negotiate(v), '2025-11-25');
});

test('batches belong to 2025-03-26 only', () => {
  assert.equal(allowsBatches('2025-03-26'), true);
  assert.equal(allowsBatches('2025-06-18'), false);
  assert.equal(allowsBatches('2025-11-25'), false);
});

test('isExactId: strings, and numbers up to 2^53-1 either way (an error answer echoes only such an id)', () => {
  for (const id of ['', 'x', 0, -0, 1.5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) assert.equal(isExactId(id), true, String(id));
  for (const id of [Number.MAX_SAFE_INTEGER + 2, -(Number.MAX_SAFE_INTEGER + 2), Infinity, NaN, null, undefined, true, {}]) assert.equal(isExactId(id), false, String(id));
});

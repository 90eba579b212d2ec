// The pure 2026-07-28 pieces: result fields, header value decoding, era selection, Accept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { complete, declaredVersion, discoverResult, metaProblem, toolsListResult } from '../../dist/mcp/modern.js';
import { bodyId, decodeHeaderValue, selectHttpEra } from '../../dist/mcp/http-era.js';
import { wantsEventStream } from '../../dist/surfaces/accept.js';

const info = { name: 'cc-mcp-bridge', version: '1.2.3' };
const hints = { ttlMs: 5, cacheScope: 'public' };

test('complete keeps a result\'s own _meta keys and adds serverInfo and resultType', () => {
  assert.deepEqual(complete({ content: [], _meta: { 'com.example/trace': 'x' } }, info), {
    content: [],
    resultType: 'complete',
    _meta: { 'com.example/trace': 'x', 'io.modelcontextprotocol/serverInfo': info },
  });
  assert.deepEqual(complete({ _meta: 'not an object' }, info)._meta, { 'io.modelcontextprotocol/serverInfo': info });
});

test('toolsListResult sorts by name in code point order; nameless entries first; a missing list is empty', () => {
  const result = toolsListResult({ tools: [{ name: 'b' }, { name: 'B' }, {}, { name: 'a' }, 'junk', { name: 'a' }] }, info, hints);
  assert.deepEqual(result.tools, [{}, 'junk', { name: 'B' }, { name: 'a' }, { name: 'a' }, { name: 'b' }]);
  assert.equal(result.ttlMs, 5);
  assert.deepEqual(toolsListResult({}, info, hints).tools, []);
});

test('discoverResult lists every served revision, newest first', () => {
  const result = discoverResult(info, 'hello', hints);
  assert.deepEqual(result.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
  assert.equal(result.instructions, 'hello');
  assert.equal(result.cacheScope, 'public');
});

test('declaredVersion and metaProblem read only params._meta', () => {
  assert.equal(declaredVersion({ params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } }), 5);
  assert.equal(declaredVersion({ params: { _meta: {} } }), undefined);
  assert.equal(declaredVersion({ params: [] }), undefined);
  assert.equal(declaredVersion('x'), undefined);
  assert.equal(metaProblem({ _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } }), null);
  assert.match(metaProblem(undefined), /params with _meta are required/);
});

test('decodeHeaderValue: plain values as they are, the base64 sentinel decoded, broken encodings null', () => {
  assert.equal(decodeHeaderValue('exec-lua'), 'exec-lua');
  assert.equal(decodeHeaderValue(`=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=`), 'Hello, 世界');
  assert.equal(decodeHeaderValue('=?base64??='), '');
  assert.equal(decodeHeaderValue('=?base64?abc?='), null); // not a multiple of 4
  assert.equal(decodeHeaderValue('=?base64?YW Jj?='), null);
  assert.equal(decodeHeaderValue('=?BASE64?YWJj?='), '=?BASE64?YWJj?='); // the markers are case-sensitive
});

test('selectHttpEra: no header is 2025-03-26, notifications skip the method headers, ids are echoed only when valid', () => {
  assert.deepEqual(selectHttpEra({}, { jsonrpc: '2.0', id: 1, method: 'ping' }), { era: 'legacy', version: '2025-03-26' });
  assert.deepEqual(selectHttpEra({ version: ' 2025-06-18 ' }, {}), { era: 'legacy', version: '2025-06-18' });
  assert.deepEqual(selectHttpEra({ version: '2026-07-28' }, { jsonrpc: '2.0', method: 'notifications/cancelled' }), { era: 'modern' });
  assert.deepEqual(selectHttpEra({ version: '2026-07-28' }, [1]), { era: 'modern' });
  const rejected = selectHttpEra({ version: 'x' }, { jsonrpc: '2.0', id: Infinity, method: 'ping' });
  assert.equal(rejected.reply.body.id, null);
  assert.equal(bodyId({ id: 'a' }), 'a');
  assert.equal(bodyId({ id: null }), null);
  assert.equal(bodyId([]), null);
});

test('wantsEventStream: only when text/event-stream is taken and nothing covering JSON is', () => {
  assert.equal(wantsEventStream(undefined), false);
  assert.equal(wantsEventStream('text/event-stream'), true);
  assert.equal(wantsEventStream('TEXT/Event-Stream; charset=utf-8'), true);
  assert.equal(wantsEventStream('text/event-stream,'), true);
  assert.equal(wantsEventStream('text/event-stream;q=0'), false);
  assert.equal(wantsEventStream('text/event-stream, application/json'), false);
  assert.equal(wantsEventStream('text/event-stream, application/*;q=0.1'), false);
  assert.equal(wantsEventStream('text/event-stream, */*'), false, '*/* covers JSON too');
  assert.equal(wantsEventStream('text/html'), false);
});

test('paramHeadersProblem: a recognised Mcp-Param header with bytes outside visible ASCII is refused; only properties chains count', async () => {
  const { paramHeaders, paramHeadersProblem } = await import('../../dist/mcp/param-headers.js');
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'A' } } } },
      odd: 'not a schema',
      // an upstream tool may carry an invalid name (config Lua tools are refused at load): not a header
      bad: { type: 'string', 'x-mcp-header': 'not a token' },
    },
  };
  assert.deepEqual(paramHeaders(schema), [{ path: ['region'], name: 'Region' }]);
  assert.deepEqual(paramHeaders(undefined), []);
  assert.match(paramHeadersProblem(schema, { region: 'x' }, { 'mcp-param-region': 'x\u00e9' }), /invalid characters/);
  assert.equal(paramHeadersProblem(schema, { region: 'x' }, { 'mcp-param-region': 'x' }), null);
  assert.equal(paramHeadersProblem(schema, 'not an object', {}), null);
  assert.equal(paramHeadersProblem(schema, { region: { deeper: 1 } }, { 'mcp-param-region': 'x' }) !== null, true);
});

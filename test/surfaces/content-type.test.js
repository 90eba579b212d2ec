// POST bodies must be JSON: a Content-Type that is present and not JSON is refused 415 on POST /mcp,
// the REST tool routes (and aliases) and POST /reload; a missing one is taken (curl without a body).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestBridge, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { contentTypeProblem } from '../../dist/surfaces/content-type.js';

const bridge = await startTestBridge();
after(() => bridge.close());

const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });

/** A POST through node:http with exactly these headers (node adds none but Host and Content-Length). */
function post(url, path, headers, body) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: u.hostname, port: u.port, path, method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, json: text === '' ? null : JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

// what a browser page may POST cross-site without a CORS preflight, and other non-JSON types
const REFUSED = ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'application/json-seq', 'json', ''];
const TAKEN = [undefined, 'application/json', 'APPLICATION/JSON; charset=utf-8', ' application/json ', 'application/json;charset=latin1', 'application/vnd.api+json', 'application/merge-patch+json; q=1'];

const headersWith = (type) => (type === undefined ? {} : { 'content-type': type });

// Before: every one of these was read, parsed and dispatched (test/surfaces/http.test.js even checked
// that text/plain got 200), so a page's plain form or fetch could drive tools without a preflight.
test('bug: POST /mcp took a text/plain or form body (no CORS preflight needed); now 415 with a JSON-RPC error naming Content-Type', async () => {
  for (const type of REFUSED) {
    const res = await post(bridge.mcpUrl, '/mcp', headersWith(type), ping);
    assert.equal(res.status, 415, JSON.stringify(type));
    assert.equal(res.json.jsonrpc, '2.0');
    assert.equal(res.json.id, null);
    assert.equal(res.json.error.code, -32600);
    assert.ok(res.json.error.message.startsWith(`Unsupported Media Type: the Content-Type header is ${JSON.stringify(type)}; the body must be JSON`), res.json.error.message);
    assert.equal(res.headers.accept, 'application/json');
    assert.equal(res.headers.connection, 'close');
  }
  // the root path is the same endpoint
  assert.equal((await post(bridge.mcpUrl, '/', { 'content-type': 'text/plain' }, ping)).status, 415);
});

test('POST /mcp with no Content-Type or a JSON one (any case, parameters, +json) is answered', async () => {
  for (const type of TAKEN) {
    const res = await post(bridge.mcpUrl, '/mcp', headersWith(type), ping);
    assert.equal(res.status, 200, JSON.stringify(type));
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 7, result: {} });
  }
});

test('bug: REST POST /tools/<name> took a text/plain or form body; now 415 unsupported_media_type', async () => {
  for (const type of REFUSED) {
    const res = await post(bridge.mcpUrl, '/tools/probe-computers', headersWith(type), '{}');
    assert.equal(res.status, 415, JSON.stringify(type));
    assert.equal(res.json.error.code, 'unsupported_media_type');
    assert.match(res.json.error.message, /the Content-Type header is .*; the body must be JSON, sent with Content-Type: application\/json/);
  }
  for (const type of TAKEN) {
    const res = await post(bridge.mcpUrl, '/tools/probe-computers', headersWith(type), type === undefined ? undefined : '{}');
    assert.equal(res.status, 200, JSON.stringify(type));
    assert.equal(res.json.isError, false);
  }
});

test('bug: a config alias and POST /reload took form posts; now 415, and nothing is reloaded', () => {
  const file = writeConfig({ endpoints: [{ path: '/probe', tool: 'probe-computers' }] });
  return withBridge({ CC_CONFIG: file }, async (configured) => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const alias = await post(configured.mcpUrl, '/probe', form, 'a=1');
    assert.equal(alias.status, 415);
    assert.equal(alias.json.error.code, 'unsupported_media_type');
    assert.equal((await post(configured.mcpUrl, '/probe', {}, undefined)).status, 200);
    const reloads = configured.logs.length;
    const reload = await post(configured.mcpUrl, '/reload', form, 'a=1');
    assert.equal(reload.status, 415);
    assert.equal(reload.json.error, 'unsupported media type');
    assert.match(reload.json.message, /Content-Type header is "application\/x-www-form-urlencoded"/);
    assert.equal(configured.logs.length, reloads, 'nothing logged: no reload ran');
    assert.equal((await post(configured.mcpUrl, '/reload', {}, undefined)).status, 200);
  });
});

test('contentTypeProblem: the same header twice gives the same answer (kept from the last call); a long one is cut in the message', () => {
  assert.equal(contentTypeProblem(undefined), null);
  assert.equal(contentTypeProblem('application/json'), null);
  assert.equal(contentTypeProblem('application/json'), null);
  const first = contentTypeProblem('text/plain');
  assert.equal(contentTypeProblem('text/plain'), first);
  assert.equal(contentTypeProblem('application/json'), null);
  // a structured syntax suffix is "+json": a subtype that merely ends in "json" is another type
  assert.equal(contentTypeProblem('application/vnd.example+json; charset=utf-8'), null);
  assert.match(contentTypeProblem('application/notjson'), /Unsupported Media Type/);
  const long = contentTypeProblem('x'.repeat(5000));
  assert.ok(long.includes(`"${'x'.repeat(100)}..."`));
  assert.ok(long.length < 400);
});

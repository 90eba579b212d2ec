import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseComputerFrame, encodeRequest, requestEncoder, requestTail, REQUEST_HEAD, encodeCancel, encodeHelloError, encodeHelloOk, LuaParams, asciiJson } from '../../dist/link/frames.js';

const parse = (value) => parseComputerFrame(typeof value === 'string' ? value : JSON.stringify(value));

test('valid hello: integer id, label kept', () => {
  assert.deepEqual(parse({ type: 'hello', computerId: 12, computerLabel: 'base-turtle', version: '0.1.0' }), {
    ok: true,
    frame: {
      type: 'hello',
      computerId: 12,
      computerLabel: 'base-turtle',
      version: '0.1.0',
      token: null,
      key: null,
      identity: { kind: null, advanced: null, host: null, ccVersion: null, peripherals: null, jobs: null },
    },
  });
});

test('a hello may carry a link token (a string; anything else is no token)', () => {
  assert.equal(parse({ type: 'hello', computerId: 1, token: 'secret-secret-secret' }).frame.token, 'secret-secret-secret');
  for (const token of [undefined, 42, null, {}, ['a']]) assert.equal(parse({ type: 'hello', computerId: 1, token }).frame.token, null);
});

test('hello id 0 is valid', () => {
  assert.equal(parse({ type: 'hello', computerId: 0 }).ok, true);
});

test('missing, empty and non-string labels become null', () => {
  for (const computerLabel of [undefined, '', 42, null, {}, ['a']]) {
    const result = parse({ type: 'hello', computerId: 3, computerLabel });
    assert.equal(result.ok, true);
    assert.equal(result.frame.computerLabel, null, `label ${JSON.stringify(computerLabel)}`);
    assert.equal(result.frame.version, null);
  }
});

test('hello with a bad computerId is rejected with a reason', () => {
  for (const computerId of [undefined, '12', -1, 1.5, null, Number.MAX_SAFE_INTEGER + 2, true]) {
    const result = parse({ type: 'hello', computerId });
    assert.equal(result.ok, false, `computerId ${JSON.stringify(computerId)}`);
    assert.match(result.error, /computerId must be an integer >= 0/);
  }
});

test('malformed JSON, non-objects and unknown types are rejected', () => {
  assert.deepEqual(parse('{not json'), { ok: false, error: 'frame is not valid JSON' });
  for (const [text, kind] of [['[]', 'an array'], ['"hello"', 'a string'], ['42', 'a number'], ['null', 'null']]) {
    assert.deepEqual(parse(text), { ok: false, error: `frame is not a JSON object (it is ${kind})` });
  }
  // the value is never quoted back: only its JSON type
  assert.deepEqual(parse({ type: 'bogus' }), { ok: false, error: 'unknown frame type (a string other than "hello", "response" or "info")' });
  assert.deepEqual(parse({ type: [[1]] }), { ok: false, error: 'unknown frame type (an array other than "hello", "response" or "info")' });
  assert.deepEqual(parse({}), { ok: false, error: 'frame has no type ("hello", "response" or "info")' });
});

test('responses: ok with result, failure with error, result kept on failure', () => {
  assert.deepEqual(parse({ type: 'response', id: 'a', ok: true, result: 'pong' }), {
    ok: true,
    frame: { type: 'response', id: 'a', ok: true, result: 'pong' },
  });
  assert.deepEqual(parse({ type: 'response', id: 'a', ok: true }), { ok: true, frame: { type: 'response', id: 'a', ok: true } });
  assert.deepEqual(parse({ type: 'response', id: 'b', ok: false, error: 'boom', result: { output: 'x' } }), {
    ok: true,
    frame: { type: 'response', id: 'b', ok: false, error: 'boom', result: { output: 'x' } },
  });
});

test('responses with bad id, ok or error are rejected', () => {
  assert.match(parse({ type: 'response', id: 7, ok: true }).error, /response.id/);
  assert.match(parse({ type: 'response', id: '', ok: true }).error, /response.id/);
  assert.match(parse({ type: 'response', id: 'x'.repeat(129), ok: true }).error, /response.id/);
  assert.match(parse({ type: 'response', id: 'a', ok: 'yes' }).error, /response.ok/);
  assert.match(parse({ type: 'response', id: 'a', ok: false }).error, /response.error/);
  assert.match(parse({ type: 'response', id: 'a', ok: false, error: 3 }).error, /response.error/);
});

test('encoders produce the link protocol frames', () => {
  assert.deepEqual(JSON.parse(encodeRequest('id1', 'ping')), { type: 'request', id: 'id1', method: 'ping' });
  assert.deepEqual(JSON.parse(encodeRequest('id2', 'exec-lua', { code: 'return 1' })), {
    type: 'request',
    id: 'id2',
    method: 'exec-lua',
    params: { code: 'return 1' },
  });
  assert.deepEqual(JSON.parse(encodeCancel('id3')), { type: 'cancel', id: 'id3' });
  assert.deepEqual(JSON.parse(encodeHelloOk(2048)), { type: 'hello-ok', maxFrame: 2048 });
  assert.deepEqual(JSON.parse(encodeHelloError('nope')), { type: 'hello-error', error: 'nope', code: 'invalid' });
  assert.deepEqual(JSON.parse(encodeHelloError('token', 'unauthorized')), { type: 'hello-error', error: 'token', code: 'unauthorized' });
});

test('requests escape every non-ASCII character so any CC version decodes them the same', () => {
  const code = 'print("héllo ☃ 😀")';
  const frame = encodeRequest('id', 'exec-lua', { code });
  assert.match(frame, /^[\x00-\x7f]*$/);
  assert.ok(frame.includes('h\\u00e9llo \\u2603 \\ud83d\\ude00'));
  assert.deepEqual(JSON.parse(frame).params.code, code);
  // a plain ASCII frame after a non-ASCII one is left as JSON.stringify makes it
  assert.equal(encodeRequest('id2', 'ping'), JSON.stringify({ type: 'request', id: 'id2', method: 'ping' }));
  assert.equal(JSON.parse(encodeRequest('id3', 'exec-lua', { code: 'é' })).params.code, 'é');
});

test("a Lua chunk's params (LuaParams) encode exactly as the object {code} or {code, args} would", () => {
  const generic = (id, method, params) => asciiJson({ type: 'request', id, method, params });
  const codes = ['return 1', '', 'print("h\u00e9llo \u2603 \ud83d\ude00")', 'x = "\\"\n\t\u0000\u001f"', '\ud800 lone', 'return ...'];
  const argss = [undefined, {}, { a: 1, b: 'w\u00e9', c: [true, null, { d: '\ud83d\ude00' }] }, { skipped: undefined, n: 2.5 }];
  for (const code of codes) {
    for (const args of argss) {
      const params = args === undefined ? { code } : { code, args };
      const frame = encodeRequest('AbC-_09xyzAbC-_09xyz12', 'exec-lua', new LuaParams(code, args));
      assert.equal(frame, generic('AbC-_09xyzAbC-_09xyz12', 'exec-lua', params));
      assert.match(frame, /^[\x00-\x7f]*$/);
      assert.deepEqual(JSON.parse(frame).params, JSON.parse(JSON.stringify(params)));
      // a single request (registry.ts) splices its base64url id before the tail: the same frame
      assert.equal(REQUEST_HEAD + 'AbC-_09xyzAbC-_09xyz12' + requestTail('exec-lua', new LuaParams(code, args)), frame);
    }
  }
  // every UTF-16 code unit, alone and inside plain text: the same frame as the generic encoding
  // (printable ASCII but quote and backslash is written as it is, anything else through asciiJson)
  for (let unit = 0; unit < 0x10000; unit++) {
    for (const code of [String.fromCharCode(unit), `return "${String.fromCharCode(unit)}"`, `a${String.fromCharCode(unit)}b`]) {
      const frame = encodeRequest('id', 'exec-lua', new LuaParams(code));
      if (frame !== generic('id', 'exec-lua', { code })) assert.fail(`code unit ${unit.toString(16)} in ${JSON.stringify(code)}`);
    }
  }
  // a method JSON would escape: the tail is still the generic encoding's
  assert.equal(REQUEST_HEAD + 'id' + requestTail('m"x', new LuaParams('return')), generic('id', 'm"x', { code: 'return' }));
  // asked again (the method is remembered as plain), the same text
  assert.equal(requestTail('exec-lua', new LuaParams('return')), requestTail('exec-lua', new LuaParams('return')));
  // an id or method JSON would escape takes the generic path, and still comes out right
  for (const [id, method] of [['a"b', 'exec-lua'], ['\u00e9', 'exec-lua'], ['id', 'm"x'], ['', 'exec-lua']]) {
    assert.equal(encodeRequest(id, method, new LuaParams('return', { k: 1 })), generic(id, method, { code: 'return', args: { k: 1 } }));
  }
});

test('a frame too short to nest past maxDepth is not walked; one just long enough is, and is refused', () => {
  // depth d takes 2d characters: at maxDepth 3, 8 characters can be 4 deep
  assert.deepEqual(parseComputerFrame('[[[[]]]]', 3), { ok: false, error: 'frame nests deeper than 3 levels' });
  assert.deepEqual(parseComputerFrame('{"a":[[{}]]}', 3), { ok: false, error: 'frame nests deeper than 3 levels' });
  assert.match(parseComputerFrame('[[[]]]', 3).error, /not a JSON object/);
  assert.equal(parseComputerFrame('{"type":"response","id":"r","ok":true,"result":[[]]}', 3).ok, true);
  const deep = `{"type":"response","id":"r","ok":true,"result":${'['.repeat(64)}${']'.repeat(64)}}`;
  assert.deepEqual(parseComputerFrame(deep), { ok: false, error: 'frame nests deeper than 64 levels', id: 'r' });
});

test('a malformed response keeps its id (when valid) so its request fails at once', () => {
  const deep = '['.repeat(100) + ']'.repeat(100);
  assert.deepEqual(parseComputerFrame(`{"type":"response","id":"r1","ok":true,"result":${deep}}`), { ok: false, error: 'frame nests deeper than 64 levels', id: 'r1' });
  assert.deepEqual(parse({ type: 'response', id: 'r2', ok: 'yes' }), { ok: false, error: 'response.ok must be a boolean', id: 'r2' });
  assert.equal(parse({ type: 'response', id: 7, ok: 'yes' }).id, undefined);
  assert.equal(parseComputerFrame(`{"type":"hello","id":"h","x":${deep}}`).id, undefined);
});

test('requestEncoder gives the same frame as encodeRequest for every id (encoded once, id spliced in)', () => {
  const ids = ['0b5d5f4e-2f0a-4c1e-9a57-3d1c2b0e9f11', 'a', ''];
  for (const [method, params] of [['ping', undefined], ['exec-lua', { code: 'print("é😀")', args: [1, null] }]]) {
    const encode = requestEncoder(method, params);
    for (const id of ids) assert.equal(encode(id), encodeRequest(id, method, params));
  }
});

test('frame limits are exact: label 1024, version 256, maxFrame 1024, response id 128 characters', () => {
  const hello = (extra) => parse({ type: 'hello', computerId: 1, ...extra });
  assert.equal(hello({ computerLabel: 'l'.repeat(1024) }).frame.computerLabel, 'l'.repeat(1024));
  assert.deepEqual(hello({ computerLabel: 'l'.repeat(1025) }), { ok: false, error: 'hello.computerLabel must be at most 1024 characters (got 1025)' });
  assert.equal(hello({ version: 'v'.repeat(256) }).frame.version, 'v'.repeat(256));
  assert.deepEqual(hello({ version: 'v'.repeat(257) }), { ok: false, error: 'hello.version must be at most 256 characters (got 257)' });
  assert.equal(hello({ maxFrame: 1024 }).frame.maxFrame, 1024);
  for (const maxFrame of [1023, 1024.5, '4096', null, Number.MAX_SAFE_INTEGER + 1]) {
    assert.deepEqual(hello({ maxFrame }), { ok: false, error: 'hello.maxFrame must be an integer >= 1024' }, `maxFrame ${maxFrame}`);
  }
  const info = (computerLabel) => parse({ type: 'info', computerLabel, peripherals: [] });
  assert.equal(info('l'.repeat(1024)).frame.computerLabel, 'l'.repeat(1024));
  assert.deepEqual(info('l'.repeat(1025)), { ok: false, error: 'info.computerLabel must be a string or null' });
  const id = 'i'.repeat(128);
  assert.deepEqual(parse({ type: 'response', id, ok: true }), { ok: true, frame: { type: 'response', id, ok: true } });
  // a malformed response with the longest id still names it, so its request fails at once
  assert.deepEqual(parse({ type: 'response', id, ok: 'yes' }), { ok: false, error: 'response.ok must be a boolean', id });
});

test("a Lua chunk's request tail is right whichever method came before (the text before the code is kept for the last method)", () => {
  const generic = (id, method, params) => asciiJson({ type: 'request', id, method, params });
  const methods = ['exec-lua', 'run-program', 'exec-lua', 'exec-lua', 'call-peripheral', 'job-start', 'exec-lua'];
  for (const code of ['return 1', 'print("x")\n', '\u00e9']) {
    for (const args of [undefined, { a: [1, 'é'] }]) {
      for (const method of methods) {
        const params = args === undefined ? { code } : { code, args };
        assert.equal(REQUEST_HEAD + 'id1' + requestTail(method, new LuaParams(code, args)), generic('id1', method, params), `${method} ${JSON.stringify(params)}`);
      }
    }
  }
});

// Newline-delimited JSON framing: partial lines, many lines per chunk, CRLF, blank lines, oversize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineReader, encodeLine, requestLine } from '../../dist/jsonrpc/ndjson.js';

function reader(maxLineBytes = 64) {
  const lines = [];
  const oversize = [];
  const r = new LineReader({ maxLineBytes, onLine: (l) => lines.push(l), onOversize: (n) => oversize.push(n) });
  return { r, lines, oversize };
}

test('a line split across chunks, several lines in one chunk, CRLF and blank lines', () => {
  const { r, lines } = reader();
  r.push(Buffer.from('{"a":'));
  r.push(Buffer.from('1}\n{"b":2}\r\n\n  \n{"c":'));
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
  r.push(Buffer.from('3}'));
  r.end();
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
});

test('a multi-byte character split between chunks arrives whole', () => {
  const { r, lines } = reader();
  const bytes = Buffer.from('"é😀"\n');
  r.push(bytes.subarray(0, 2));
  r.push(bytes.subarray(2));
  assert.deepEqual(lines, ['"é😀"']);
});

test('a line over the limit is dropped whole, reported once with its size, and the next line is read', () => {
  const { r, lines, oversize } = reader(8);
  r.push(Buffer.from('12345'));
  r.push(Buffer.from('6789012'));
  r.push(Buffer.from('345\nok\n'));
  assert.deepEqual(oversize, [15]);
  assert.deepEqual(lines, ['ok']);
  r.push(Buffer.from('0123456789'));
  r.end();
  assert.deepEqual(oversize, [15, 10]);
});

test('lines whole inside one chunk: CRLF split across chunks, a line of exactly the limit kept, one byte over dropped', () => {
  const { r, lines, oversize } = reader(8);
  r.push(Buffer.from('12345678\n123456789\n"a"\r'));
  r.push(Buffer.from('\n\r\n"b"\r\n'));
  assert.deepEqual(lines, ['12345678', '"a"', '"b"']);
  assert.deepEqual(oversize, [9]);
  // a carriage return inside a line stays; only the one before the newline goes
  r.push(Buffer.from('a\rb\r\r\n'));
  assert.deepEqual(lines, ['12345678', '"a"', '"b"', 'a\rb\r']);
});

test('a UTF-8 byte order mark before the first line is dropped (also split across chunks); one on a later line is kept, so that line stays invalid JSON', () => {
  const { r, lines } = reader();
  r.push(Buffer.from([0xef, 0xbb]));
  r.push(Buffer.concat([Buffer.from([0xbf]), Buffer.from('{"a":1}\n\ufeff{"b":2}\n')]));
  assert.deepEqual(lines, ['{"a":1}', '\ufeff{"b":2}']);
  const whole = reader();
  whole.r.push(Buffer.from('\ufeff{"c":3}\n'));
  assert.deepEqual(whole.lines, ['{"c":3}']);
  // a first line dropped for its size uses up the first line: a BOM after it is kept
  const dropped = reader(8);
  dropped.r.push(Buffer.from('{"long":"line"}\n\ufeff{}\n'));
  assert.deepEqual(dropped.lines, ['\ufeff{}']);
});

test('encodeLine writes one line with no embedded newline', () => {
  const line = encodeLine({ text: 'a\nb' });
  assert.equal(line, '{"text":"a\\nb"}\n');
  assert.equal(line.indexOf('\n'), line.length - 1);
});

test('requestLine writes the same line as encodeLine of the request object', () => {
  const params = [
    undefined,
    null,
    {},
    [],
    [1, 'two', null],
    { name: 'echo', arguments: { n: 1 } },
    { name: 'a"b\\c\n\u2028é😀', arguments: { nested: { deep: [{ x: -0, y: 1e21, z: 0.1 }] }, skipped: undefined, fn: () => 1 } },
    { toJSON: () => ({ replaced: true }) },
    'a string',
    42,
    () => 'a function is left out, as in an object',
    Symbol('left out too'),
  ];
  // the method alternates so the quoted-method cache is both hit and refilled
  const methods = ['tools/call', 'tools/call', 'tools/list', 'we"ird\nmethod', 'tools/call', ''];
  let id = 1;
  for (const p of params) {
    for (const method of methods) {
      const object = p === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: p };
      assert.equal(requestLine(id, method, p), encodeLine(object), `${method} ${String(typeof p === 'symbol' ? 'symbol' : JSON.stringify(p))}`);
      id = id * 7 + 1;
    }
  }
  assert.equal(requestLine(Number.MAX_SAFE_INTEGER, 'm', { a: 1 }), '{"jsonrpc":"2.0","id":9007199254740991,"method":"m","params":{"a":1}}\n');
});

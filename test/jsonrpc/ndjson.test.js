// Newline-delimited JSON framing: partial lines, many lines per chunk, CRLF, blank lines, oversize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineReader, ToolCallParams, encodeLine, requestLine } from '../../dist/jsonrpc/ndjson.js';

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

test('requestLine writes ToolCallParams as encodeLine writes the same { name, arguments } object', () => {
  const names = ['echo', 'echo', 'files.read/v2', 'a"b\\c\n\u2028é😀', 'echo', ''];
  const args = [
    {},
    { n: 1 },
    { nested: { deep: [{ x: -0, y: 1e21, z: 0.1 }] }, skipped: undefined, fn: () => 1, s: 'line\nbreak\u2028' },
    { toJSON: () => ({ replaced: true }) },
    { toJSON: 'not a function: a key like any other' },
    [1, 2],
    // not an object the bridge sends (call.ts passes `arguments ?? {}`), but written as JSON.stringify would
    undefined,
    null,
  ];
  let id = 1;
  for (const a of args) {
    for (const name of names) {
      const params = new ToolCallParams(name, a);
      const line = requestLine(id, 'tools/call', params);
      assert.equal(line, encodeLine({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: a } }), `${name} ${JSON.stringify(a)}`);
      // and the HTTP transport, which stringifies the whole message, sends the same JSON
      assert.equal(line, encodeLine({ jsonrpc: '2.0', id, method: 'tools/call', params }));
      id++;
    }
  }
  assert.equal(requestLine(7, 'tools/call', new ToolCallParams('echo', { n: 1 })), '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}\n');
  // a value JSON.stringify cannot write throws as it does for the object
  assert.throws(() => requestLine(8, 'tools/call', new ToolCallParams('echo', { big: 1n })), TypeError);
});

test('bug: a line of exactly the limit with a CRLF ending was dropped as one byte over (the \\r counted); now the \\r is the ending, in one chunk or split anywhere, and a dropped line\'s size leaves it out', () => {
  const line = `{"a":"${'x'.repeat(64 - 8)}"}`;
  assert.equal(line.length, 64);
  const whole = reader();
  whole.r.push(Buffer.from(`${line}\r\n${line}\n`));
  assert.deepEqual(whole.lines, [line, line]);
  assert.deepEqual(whole.oversize, []);
  // split before the \r, between \r and \n, and byte by byte
  for (const cuts of [[64], [65], Array.from({ length: 66 }, (_, i) => i + 1)]) {
    const { r, lines, oversize } = reader();
    const bytes = Buffer.from(`${line}\r\n`);
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      r.push(bytes.subarray(at, cut));
      at = cut;
    }
    assert.deepEqual(lines, [line], `cut at ${cuts.slice(0, 3)}`);
    assert.deepEqual(oversize, []);
  }
  // one byte over stays over, with either ending, whole or split; its size is the line's own bytes
  const over = `${line}y`;
  for (const text of [`${over}\n`, `${over}\r\n`]) {
    for (const cut of [0, 30, 65]) {
      const { r, lines, oversize } = reader();
      r.push(Buffer.from(text.slice(0, cut)));
      r.push(Buffer.from(text.slice(cut)));
      r.push(Buffer.from('{"next":1}\n'));
      assert.deepEqual(oversize, [65], `${JSON.stringify(text.slice(-2))} cut at ${cut}`);
      assert.deepEqual(lines, ['{"next":1}']);
    }
  }
  // a long line dropped while streaming: its \r is not counted either
  const { r, oversize } = reader();
  r.push(Buffer.from('x'.repeat(100)));
  r.push(Buffer.from('x'.repeat(100)));
  r.push(Buffer.from('\r\n'));
  r.end();
  assert.deepEqual(oversize, [200]);
});

test('onInvalidUtf8: a line that is not UTF-8 is reported by its size instead of decoded with U+FFFD (also split across chunks); valid lines around it are read; without the option it is decoded as before', () => {
  const bad = Buffer.concat([Buffer.from('{"id":"a'), Buffer.from([0xc3]), Buffer.from('"}')]);
  const lines = [];
  const invalid = [];
  const r = new LineReader({ maxLineBytes: 64, onLine: (l) => lines.push(l), onOversize: () => assert.fail('no oversize'), onInvalidUtf8: (n) => invalid.push(n) });
  r.push(Buffer.concat([Buffer.from('{"ok":"é"}\n'), bad.subarray(0, 9)]));
  r.push(Buffer.concat([bad.subarray(9), Buffer.from('\r\n'), Buffer.from([0xff, 0x0a]), Buffer.from('{"ok":2}\n')]));
  assert.deepEqual(lines, ['{"ok":"é"}', '{"ok":2}']);
  assert.deepEqual(invalid, [bad.length, 1]);
  const lax = reader();
  lax.r.push(Buffer.concat([bad, Buffer.from('\n')]));
  assert.deepEqual(lax.lines, ['{"id":"a\ufffd"}']);
});

test('a line one byte over the limit (no \\r to spare it) is dropped like a longer one: it uses up the first line, and its id is found only with findIds', () => {
  // 9 bytes at a limit of 8: the byte kept past the limit is not a \r, so the line is over it by one
  const over = '{"id":55}';
  const dropped = reader(8);
  dropped.r.push(Buffer.from(`${over}\n\ufeff{}\n`));
  assert.deepEqual(dropped.oversize, [9]);
  assert.deepEqual(dropped.lines, ['\ufeff{}'], 'a BOM after a dropped first line is kept');
  const ids = (findIds) => {
    const found = [];
    const r = new LineReader({ maxLineBytes: 8, findIds, onLine: () => {}, onOversize: (n, id) => found.push([n, id]) });
    r.push(Buffer.from(`${over}\n`));
    return found;
  };
  assert.deepEqual(ids(true), [[9, 55]]);
  assert.deepEqual(ids(undefined), [[9, null]]);
});

test('lines read from chunks of whole lines (decoded a chunk at a time) are exactly the lines read a byte at a time', () => {
  // a byte at a time never has a newline after the first byte of a chunk, so it is the line-by-line path
  const pieces = [
    '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"n\\":1}"}]}}',
    '"é😀 ünïcode"',
    '{"crlf":true}\r',
    '',
    '   ',
    '\t',
    'a lone \r inside',
    '\r\r',
    '"\u2028"',
    'x'.repeat(40),
    'y'.repeat(41),
    'z'.repeat(90),
  ];
  const invalid = [Buffer.from([0xff, 0x41]), Buffer.from([0x7b, 0xe2, 0x82]), Buffer.from([0xc3]), Buffer.from([0xef, 0xbb, 0xbf, 0x31])];
  let seed = 7;
  // a small deterministic generator (xorshift32)
  const rand = (n) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const read = (stream, chunking, maxLineBytes) => {
    const out = [];
    const r = new LineReader({ maxLineBytes, findIds: true, onLine: (l) => out.push(['line', l]), onOversize: (n, id) => out.push(['oversize', n, id]) });
    for (let at = 0; at < stream.length; ) {
      const n = chunking === 'bytes' ? 1 : 1 + rand(chunking);
      r.push(stream.subarray(at, at + n));
      at += n;
    }
    r.end();
    return out;
  };
  for (let round = 0; round < 40; round++) {
    const parts = [];
    // a BOM on the first line now and then: dropped before the first line only, on either path
    if (round % 3 === 0) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
    for (let i = 0; i < 30; i++) {
      parts.push(rand(5) === 0 ? invalid[rand(invalid.length)] : Buffer.from(pieces[rand(pieces.length)]));
      parts.push(Buffer.from('\n'));
    }
    if (round % 2 === 0) parts.push(Buffer.from('{"last":"no newline"}'));
    const stream = Buffer.concat(parts);
    for (const maxLineBytes of [64, 1 << 20]) {
      const expected = read(stream, 'bytes', maxLineBytes);
      assert.ok(expected.filter(([k]) => k === 'line').length > 10);
      if (maxLineBytes === 64) assert.ok(expected.some(([k]) => k === 'oversize'));
      // chunks of up to 1, 100 and 4,000 bytes: most carry several whole lines
      for (const chunking of [100, 4000, stream.length]) assert.deepEqual(read(stream, chunking, maxLineBytes), expected, `round ${round}, chunks up to ${chunking}, limit ${maxLineBytes}`);
    }
  }
});

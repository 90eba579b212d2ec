// The top-level id scanner for messages too large to parse: ids anywhere among the top-level keys,
// split across chunks, nested "id" keys and strings that look like JSON ignored, requests excluded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TopLevelIdScanner } from '../../dist/jsonrpc/id-scan.js';
import { LineReader } from '../../dist/jsonrpc/ndjson.js';

function scan(text, pieceBytes = Infinity) {
  const scanner = new TopLevelIdScanner();
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += Math.min(pieceBytes, bytes.length)) scanner.push(bytes.subarray(i, i + pieceBytes));
  return scanner.id;
}

test('finds a number or string id before or after a large result, in one piece or byte by byte', () => {
  const result = `{"content":[{"type":"text","text":"${'x\\"{[}]'.repeat(100)}"}],"id":99,"nested":{"id":98}}`;
  const cases = [
    [`{"jsonrpc":"2.0","id":7,"result":${result}}`, 7],
    [`{"jsonrpc":"2.0","result":${result},"id":"abc"}`, 'abc'],
    [`{ "result" : ${result} , "id" : -12.5e1 }`, -125],
    [`{"id":"with \\"quotes\\" and \\\\","result":[]}`, 'with "quotes" and \\'],
    [`{"id":"é😀","result":1}`, 'é😀'],
    [`{\n\t"result": "id",\r\n"id": 3\n}`, 3],
  ];
  for (const [text, id] of cases) {
    assert.equal(scan(text), id, text.slice(0, 60));
    assert.equal(scan(text, 1), id, `byte by byte: ${text.slice(0, 60)}`);
    assert.equal(scan(text, 7), id, `7 bytes at a time: ${text.slice(0, 60)}`);
  }
});

test('no id: a request or notification, no top-level id, an id that is not a number or string, not an object', () => {
  for (const text of [
    '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}',
    '{"method":"x","id":2}',
    '{"result":{"id":5}}',
    '{"id":{"a":1},"result":1}',
    '{"id":[1],"result":1}',
    '{"id":null,"result":1}',
    '{"id":true,"result":1}',
    `{"id":"${'a'.repeat(300)}","result":1}`,
    '{"id":12x,"result":1}',
    '[{"id":1,"result":1}]',
    '"id"',
    '',
    '{"ids":4,"i":5,"result":1}',
  ]) {
    assert.equal(scan(text), null, text.slice(0, 60));
  }
});

test('the last top-level id wins, as JSON.parse keeps it; an id cut off by the end of a dropped line still counts', () => {
  assert.equal(scan('{"id":1,"result":2,"id":3}'), 3);
  assert.equal(scan('{"result":2,"id":44'), null); // the value never ended: not known whole
  assert.equal(scan('{"result":2,"id":44 '), 44);
});

test('LineReader with findIds reports the id of a line it dropped for its size; without, null', () => {
  const found = [];
  const r = new LineReader({ maxLineBytes: 32, findIds: true, onLine: () => {}, onOversize: (n, id) => found.push([n, id]) });
  const line = `{"jsonrpc":"2.0","result":"${'y'.repeat(100)}","id":5}\n`;
  r.push(Buffer.from(line.slice(0, 20)));
  r.push(Buffer.from(line.slice(20, 60)));
  r.push(Buffer.from(line.slice(60)));
  r.push(Buffer.from('{"method":"m","params":"' + 'z'.repeat(50) + '","id":6}\n'));
  assert.deepEqual(found, [[line.length - 1, 5], [83, null]]);
  const plain = [];
  const p = new LineReader({ maxLineBytes: 32, onLine: () => {}, onOversize: (n, id) => plain.push(id) });
  p.push(Buffer.from(line));
  assert.deepEqual(plain, [null]);
});

test('a number id JSON reads as Infinity (1e999) is no id: no request can carry it', () => {
  assert.equal(scan('{"id":1e999,"result":1}'), null);
  assert.equal(scan('{"id":-1e999,"result":1}'), null);
  assert.equal(scan('{"id":1e308,"result":1}'), 1e308);
});

test('a huge top-level key costs the scanner no memory: it keeps at most the first 7 bytes of a key (enough to tell "id" and "method")', () => {
  const scanner = new TopLevelIdScanner();
  scanner.push(Buffer.from(`{"${'k'.repeat(100_000)}`));
  // no observable but the buffer itself: the key being read, cut
  assert.ok(scanner.key.length <= 7, String(scanner.key.length));
  scanner.push(Buffer.from('":1,"id":9}'));
  assert.equal(scanner.id, 9);
});

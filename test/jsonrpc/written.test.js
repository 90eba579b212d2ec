import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPlainText, jsonText, stringText, written, writtenText } from '../../dist/jsonrpc/written.js';

// every UTF-16 code unit alone, and inside and around plain text (quotes, backslashes, controls,
// DEL, non-ASCII, lone and paired surrogates)
function oddStrings() {
  const out = ['', 'plain text', 'return', '"', '\\', 'a"b\\c', '\u2028', '\ud83d\ude00', '\ud83d', '\ude00x', '\u007f', '~ !#[]'];
  for (let c = 0; c < 0x10000; c++) {
    const ch = String.fromCharCode(c);
    out.push(ch);
    if (c < 0x300 || (c >= 0xd7f0 && c < 0xe010) || c % 97 === 0) out.push(`ab${ch}cd`, `${ch}${ch}`);
  }
  return out;
}

test('stringText writes every string as JSON.stringify does', () => {
  for (const s of oddStrings()) assert.equal(stringText(s), JSON.stringify(s), JSON.stringify(s));
});

test('isPlainText: the loop (up to 64 characters) and the regex (longer) agree on where plain text ends', () => {
  const odd = ['"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u0080', 'é', '\u2028', '\ud800', '\udc00'];
  for (const length of [0, 1, 63, 64, 65, 66, 200]) {
    const plain = 'x'.repeat(length);
    assert.equal(isPlainText(plain), true, String(length));
    assert.equal(stringText(plain), JSON.stringify(plain));
    if (length === 0) continue;
    for (const c of [...odd, ' ', '~', '!', '#', '[', ']']) {
      for (const at of [0, length >> 1, length - 1]) {
        const text = plain.slice(0, at) + c + plain.slice(at + 1);
        assert.equal(isPlainText(text), JSON.stringify(text) === `"${text}"` && /^[\x20-\x7e]*$/.test(text), JSON.stringify({ length, c, at }));
        assert.equal(stringText(text), JSON.stringify(text), JSON.stringify({ length, c, at }));
      }
    }
  }
});

test('jsonText splices a written result into its result response, byte for byte what JSON.stringify writes', () => {
  const ids = [0, 1, -1, 7.5, 2 ** 53 - 1, -(2 ** 53 - 1), 1e21, -0, 'x', '', 'a"b', 'line\nbreak', '\u2028', '\ud800', 'é'];
  for (const id of ids) {
    const result = { content: [{ type: 'text', text: 'hi' }], structuredContent: { a: 1 } };
    const text = JSON.stringify(result);
    written(result, text);
    const body = { jsonrpc: '2.0', id, result };
    assert.equal(jsonText(body), JSON.stringify(body), JSON.stringify(id));
  }
});

test('jsonText uses the written text, and only for the object it was written for', () => {
  const result = written({ content: [] }, '{"written":true}');
  assert.equal(writtenText(result), '{"written":true}');
  // the splice is taken: the text decides, not the object (this is what makes a stale text dangerous)
  assert.equal(jsonText({ jsonrpc: '2.0', id: 1, result }), '{"jsonrpc":"2.0","id":1,"result":{"written":true}}');
  // a copy carries the symbol (spread copies symbols) but is another object: JSON.stringify'd whole
  const copy = { ...result, resultType: 'complete' };
  assert.equal(writtenText(copy), undefined);
  assert.equal(jsonText({ jsonrpc: '2.0', id: 1, result: copy }), '{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}');
  // anything but exactly {jsonrpc: '2.0', id, result} is JSON.stringify'd whole
  const others = [
    { id: 1, jsonrpc: '2.0', result },
    { jsonrpc: '2.0', result, id: 1 },
    { jsonrpc: '2.0', id: 1, result, extra: 1 },
    { jsonrpc: '2.0', id: null, result },
    { jsonrpc: '2.0', id: { a: 1 }, result },
    { jsonrpc: '1.0', id: 1, result },
    { jsonrpc: '2.0', result },
    [{ jsonrpc: '2.0', id: 1, result }],
    { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } },
    { jsonrpc: '2.0', id: 1, result: 'text' },
    { jsonrpc: '2.0', id: 1, result: null },
    null,
    'text',
    5,
  ];
  for (const body of others) assert.equal(jsonText(body), JSON.stringify(body), JSON.stringify(body));
  // an inherited enumerable key (a polluted prototype) is not taken for the response's shape
  const child = Object.create({ inherited: 1 });
  Object.assign(child, { jsonrpc: '2.0', id: 1, result });
  assert.equal(jsonText(child), JSON.stringify(child));
});

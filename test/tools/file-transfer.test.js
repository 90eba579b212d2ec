// read-file / write-file on the bridge side against fake computers: every malformed or inconsistent
// answer is a specific error, limits are enforced before anything is sent, checksums are compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, withBridge } from '../helpers.js';
import { adler32, adlerText, isStrictBase64 } from '../../dist/tools/checksum.js';

const text = (result) => result.content.map((c) => c.text).join('\n');

test('adler32 matches RFC 1950 values and runs on', () => {
  assert.equal(adler32(Buffer.from('Wikipedia')), 0x11e60398);
  assert.equal(adler32(Buffer.alloc(0)), 1);
  const all = Buffer.alloc(100000, 255);
  assert.equal(adler32(all.subarray(50000), adler32(all.subarray(0, 50000))), adler32(all));
  assert.equal(adlerText(0x11e60398), 'adler32:11e60398');
  assert.equal(isStrictBase64('aGk='), true);
  for (const bad of ['aGk', 'aG k=', 'aGl=', 'a-_=', '====']) assert.equal(isStrictBase64(bad), false, bad);
});

/** A fake computer serving one file from memory for read-file, with `tamper` changing its answers. */
function fileServer(content, tamper = (r) => r) {
  return (frame) => {
    if (frame.method !== 'read-file') return { ok: false, error: 'unknown method' };
    const { offset, checksum } = frame.params;
    const piece = content.subarray(offset, offset + 1000);
    return { ok: true, result: tamper({ size: content.length, offset, length: piece.length, checksum: adler32(piece, checksum), data: piece.toString('base64') }, frame) };
  };
}

test('read-file: pieces joined and checked; malformed, inconsistent and too-big answers are errors', () =>
  withBridge({ CC_MAX_FILE_BYTES: '5000' }, async (bridge) => {
    const content = Buffer.from(Array.from({ length: 2500 }, (_, i) => i % 256));
    let tamper = (r) => r;
    await linkComputer(bridge, { computerId: 1, onRequest: (f) => fileServer(content, (r, fr) => tamper(r, fr))(f) });
    const ok = await callTool(bridge, 'read-file', { computerId: 1, path: 'f' });
    assert.ok(Buffer.from(ok.structuredContent.content, 'base64').equals(content));
    assert.equal(ok.structuredContent.checksum, adlerText(adler32(content)));
    const bad = async (fn, pattern) => {
      tamper = fn;
      const r = await callTool(bridge, 'read-file', { computerId: 1, path: 'f' });
      assert.equal(r.isError, true);
      assert.match(text(r), pattern);
    };
    await bad(() => 'nope', /malformed read-file result: expected \{size, offset, length, checksum, data\}/);
    await bad((r) => ({ ...r, data: 'a b' }), /"data" is not base64/);
    await bad((r) => ({ ...r, length: r.length + 1 }), /"data" holds 1000 bytes, "length" says 1001/);
    await bad((r) => ({ ...r, checksum: r.checksum + 1 }), /^checksum mismatch on computer 1 \(Label: null\): reading f bytes 0-1000/);
    await bad((r, f) => (f.params.offset > 0 ? { ...r, size: 9 } : r), /^f changed size while it was being read \(2500 -> 9 bytes\)/);
    await bad((r, f) => (f.params.offset > 0 ? { ...r, length: 0, data: '', checksum: f.params.checksum } : r), /^f ended at 1000 of 2500 bytes/);
    await bad((r) => ({ ...r, size: 6000 }), /^f is 6000 bytes; the bridge moves files of at most 5000 bytes \(CC_MAX_FILE_BYTES\)\.$/);
    // the limit's edge, and a piece the computer says is from another offset than the one asked for
    await bad((r) => ({ ...r, size: 5001 }), /^f is 5001 bytes; the bridge moves files of at most 5000 bytes \(CC_MAX_FILE_BYTES\)\.$/);
    await bad((r) => ({ ...r, offset: r.offset + 1 }), /malformed read-file result: expected \{size, offset, length, checksum, data\}/);
  }));

test('write-file: bad base64 and too much content are refused before anything is sent', () =>
  withBridge({ CC_MAX_FILE_BYTES: '2000' }, async (bridge) => {
    const seen = [];
    await linkComputer(bridge, { computerId: 2, onRequest: (f) => (seen.push(f), null) });
    const b64 = await callTool(bridge, 'write-file', { computerId: 2, path: 'x', content: 'not base64!', encoding: 'base64' });
    assert.match(text(b64), /^argument "content" is not base64/);
    const big = await callTool(bridge, 'write-file', { computerId: 2, path: 'x', content: 'x'.repeat(2001) });
    assert.equal(text(big), 'the content is 2001 bytes; the bridge moves files of at most 2000 bytes (CC_MAX_FILE_BYTES).');
    assert.equal(seen.length, 0);
  }));

test('write-file: a failure after the first piece says the file is incomplete; malformed answers; a short read-back', () =>
  withBridge({}, async (bridge) => {
    let mode = 'fail-second';
    let pieces = 0;
    await linkComputer(bridge, {
      computerId: 3,
      onRequest: (f) => {
        const p = f.params;
        if (p.verify) {
          if (mode === 'short') return { ok: true, result: { length: p.length - 1, checksum: 1 } };
          if (mode === 'bad-verify') return { ok: true, result: {} };
          return { ok: false, error: '/x: No such file' };
        }
        pieces++;
        const data = Buffer.from(p.data, 'base64');
        if (mode === 'fail-second' && !p.first) return { ok: false, error: 'Out of space' };
        if (mode === 'bad') return { ok: true, result: { written: -1 } };
        return { ok: true, result: { written: data.length, size: data.length, checksum: adler32(data, p.checksum) } };
      },
    });
    const content = 'y'.repeat(300000);
    const r1 = await callTool(bridge, 'write-file', { computerId: 3, path: 'x', content });
    assert.match(text(r1), /^Out of space \(after \d+ of 300000 bytes were written: x is incomplete\)$/);
    assert.equal(pieces, 2);
    mode = 'bad';
    assert.match(text(await callTool(bridge, 'write-file', { computerId: 3, path: 'x', content: 'z' })), /malformed write-file result: expected \{written: 1, size, checksum\}/);
    mode = 'short';
    assert.match(text(await callTool(bridge, 'write-file', { computerId: 3, path: 'x', content: 'abc' })), /^after writing, x on computer 3 \(Label: null\) holds 2 bytes at 0 where 3 were written/);
    mode = 'bad-verify';
    assert.match(text(await callTool(bridge, 'write-file', { computerId: 3, path: 'x', content: 'abc' })), /expected \{length, checksum\} when verifying/);
    mode = 'verify-error';
    assert.equal(text(await callTool(bridge, 'write-file', { computerId: 3, path: 'x', content: 'abc' })), '/x: No such file');
  }));

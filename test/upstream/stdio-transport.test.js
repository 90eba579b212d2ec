// The stdio transport alone against tiny child programs: partial lines and several messages per
// chunk, stderr lines into the log, the environment a child gets, writes after exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../dist/log.js';
import { StdioTransport } from '../../dist/upstream/stdio.js';
import { until } from '../helpers.js';

function transport(script, env = {}) {
  const lines = [];
  const t = new StdioTransport({ command: process.execPath, args: ['-e', script], env, maxLineBytes: 1024, log: createLogger('debug', (l) => lines.push(l)), name: 'upstream t' });
  const messages = [];
  const closed = [];
  const started = t.start({ message: (m) => messages.push(m), close: (r) => closed.push(r) });
  return { t, lines, messages, closed, started };
}

test('messages split across chunks and several in one chunk all arrive, in order', async () => {
  const script = `
    const w = (s) => new Promise((r) => process.stdout.write(s, r));
    (async () => {
      await w('{"jsonrpc":"2.0","method":"a"}\\n{"jsonrpc":"2.0","me');
      await new Promise((r) => setTimeout(r, 20));
      await w('thod":"b"}\\r\\n\\n{"jsonrpc":"2.0","method":"c"}\\n');
      process.stderr.write('one\\ntwo');
      await new Promise((r) => setTimeout(r, 20));
      process.exit(0);
    })();`;
  const { messages, lines, closed, started } = transport(script);
  await started;
  await until(() => closed.length === 1);
  assert.deepEqual(messages.map((m) => m.method), ['a', 'b', 'c']);
  assert.deepEqual(closed, ['the process exited with code 0']);
  assert.ok(lines.some((l) => / info upstream t stderr: one$/.test(l)));
  assert.ok(lines.some((l) => / info upstream t stderr: two$/.test(l)), 'a last line without its newline still counts');
  assert.ok(lines.some((l) => / warn upstream t exited with code 0/.test(l)));
});

test('the child gets PATH and its own env, not the other variables of the bridge; sends reach its stdin', async () => {
  process.env.CC_TEST_SECRET = 'do-not-leak';
  try {
    const script = `
      process.stdin.on('data', (d) => {
        process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'env', params: { echo: d.toString(), secret: process.env.CC_TEST_SECRET ?? null, own: process.env.OWN, path: !!process.env.PATH } }) + '\\n');
      });`;
    const { t, messages, started } = transport(script, { OWN: 'mine' });
    await started;
    assert.ok(t.pid > 0);
    await Promise.all([t.send({ a: 1 }), t.send({ b: 2 })]);
    await until(() => messages.map((m) => m.params.echo).join('').includes('{"b":2}'));
    assert.deepEqual({ ...messages[0].params, echo: undefined }, { echo: undefined, secret: null, own: 'mine', path: true });
    assert.equal(messages.map((m) => m.params.echo).join(''), '{"a":1}\n{"b":2}\n', 'both sends, one line each');
    await t.close();
    await assert.rejects(t.send({}), /the process is not running/);
    await t.close();
  } finally {
    delete process.env.CC_TEST_SECRET;
  }
});

test('messages sent in one turn leave in one write and share its outcome; close writes them before it ends stdin', async () => {
  // the child answers each chunk it reads with the chunk, and says when its stdin ended
  const script = `
    process.stdin.on('data', (d) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'chunk', params: { text: d.toString() } }) + '\\n'));
    process.stdin.on('end', () => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'eof' }) + '\\n'));`;
  const { t, messages, started } = transport(script);
  await started;
  const sends = [t.send({ a: 1 }), t.send({ b: 2 }), t.send({ c: 3 })];
  assert.equal(new Set(sends).size, 1, 'one promise for the turn');
  await Promise.all(sends);
  await until(() => messages.length >= 1);
  assert.deepEqual(messages.map((m) => m.params.text), ['{"a":1}\n{"b":2}\n{"c":3}\n'], 'one chunk: one write');
  // sent in the same turn as close: written before the end of stdin, not dropped
  const last = t.send({ d: 4 });
  const closed = t.close();
  await last;
  await until(() => messages.some((m) => m.method === 'eof'));
  assert.equal(messages.filter((m) => m.method === 'chunk').map((m) => m.params.text).join(''), '{"a":1}\n{"b":2}\n{"c":3}\n{"d":4}\n');
  assert.ok(messages.findIndex((m) => m.method === 'eof') > messages.findIndex((m) => m.params?.text?.includes('"d"')));
  await closed;
});

test('sendRequest writes the line send writes for the same request, in the same write of the turn', async () => {
  const script = `
    process.stdin.on('data', (d) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'chunk', params: { text: d.toString() } }) + '\\n'));`;
  const { t, messages, started } = transport(script);
  await started;
  const params = { name: 'echo', arguments: { text: 'é "q"\n', n: [1, null] } };
  const sends = [t.sendRequest(7, 'tools/call', params), t.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params }), t.sendRequest(9, 'ping', undefined)];
  assert.equal(new Set(sends).size, 1, 'one promise for the turn');
  await Promise.all(sends);
  await until(() => messages.map((m) => m.params.text).join('').split('\n').length === 4);
  const lines = messages.map((m) => m.params.text).join('').split('\n');
  assert.deepEqual(JSON.parse(lines[0]), { jsonrpc: '2.0', id: 7, method: 'tools/call', params });
  assert.equal(lines[0].replace('"id":7', '"id":8'), lines[1], 'byte for byte the line send writes');
  assert.equal(lines[2], '{"jsonrpc":"2.0","id":9,"method":"ping"}');
  await t.close();
  await assert.rejects(t.sendRequest(10, 'tools/call', {}), /the process is not running/);
});

test('a turn whose pipe is gone before its write rejects every send of it', async () => {
  const { t, started } = transport('setInterval(() => {}, 1000)');
  await started;
  const sends = [t.send({ a: 1 }), t.send({ b: 2 })];
  t.child.stdin.destroy();
  for (const s of sends) await assert.rejects(s, /the process is not running/);
  await t.close();
});

// Audit: cc-mcp printed a tool's text as the computer sent it, to the operator's terminal too. A
// program's output or a file's text is whatever a player's program (or an impostor linked as the
// computer) chose: ESC [2J cleared the screen, OSC 52 writes the clipboard in many terminals, some
// answer queries by typing into the shell. CC's own terminal draws no escape sequences, so nothing
// meant for a screen is lost by escaping them. Piped (not a terminal), the text stays byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { runCli } from '../../dist/cli/run.js';
import { linkComputer, withBridge } from '../helpers.js';

const EVIL = 'hi\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2J\r\nbye\u009b31m\n';

async function cli(args, isTTY) {
  const out = { stdout: '', stderr: '' };
  const code = await runCli(
    args,
    {
      out: (t) => (out.stdout += t),
      err: (t) => (out.stderr += t),
      readFile: async () => '',
      readStdin: async () => '',
      env: {},
      signal: new AbortController().signal,
      isTTY,
    },
    '0',
  );
  return { code, ...out };
}

test('bug: cc-mcp wrote a computer\'s output with its escape sequences (OSC 52, ESC [2J, CSI) to the operator\'s terminal; now escaped there, kept byte for byte when piped', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 5, onRequest: () => ({ ok: true, result: { output: EVIL, returns: [], truncated: false } }) });
    const tty = await cli(['--url', bridge.mcpUrl, 'exec', '5', '-e', 'x'], true);
    assert.equal(tty.code, 0);
    assert.equal(tty.stdout, 'hi\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b[2J\r\nbye\\u009b31m\n');
    assert.doesNotMatch(tty.stdout, /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f]/);
    const json = await cli(['--url', bridge.mcpUrl, '--json', 'exec', '5', '-e', 'x'], true);
    assert.doesNotMatch(json.stdout, /[\u007f-\u009f]/);
    const piped = await cli(['--url', bridge.mcpUrl, 'exec', '5', '-e', 'x'], false);
    assert.equal(piped.stdout, EVIL);
    await c.close();
  }));

test('bug: an error text from the server (the bridge\'s refusal, a server at --url) reached stderr with its control characters; now escaped', { timeout: 60_000 }, async (t) => {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { id } = JSON.parse(body);
      if (id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'no\u001b]52;c;aGk=\u0007\u001b[2J\nfake line' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const run = await cli(['--url', `http://127.0.0.1:${server.address().port}/mcp`, 'tools'], true);
  assert.notEqual(run.code, 0);
  assert.doesNotMatch(run.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, JSON.stringify(run.stderr));
  assert.match(run.stderr, /no\\u001b\]52;c;aGk=\\u0007\\u001b\[2J\\u000afake line/);
  assert.equal(run.stderr.split('\n').length, 2, 'one line');
});

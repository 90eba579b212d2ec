// The process entry with a bad CC_CONFIG file: exit 2 before listening, every problem on stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { writeConfig } from './write.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('a bad config file exits 2 with the file, JSON path and reason of every problem', async () => {
  const file = writeConfig({ tools: [{ name: 'a.b', target: 'argument', lua: 'return' }], servers: [{ id: 'x' }] });
  const child = spawn(process.execPath, ['dist/index.js'], {
    cwd: ROOT,
    env: { ...process.env, CC_CONFIG: file, MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const [code] = await once(child, 'exit');
  assert.equal(code, 2);
  assert.equal(stdout, '', 'nothing listened');
  assert.equal(
    stderr,
    `cc-mcp-bridge: invalid configuration file:\n${file}: $.tools[0].name: must be 1-64 characters of A-Z a-z 0-9 _ -\n` +
      `${file}: $.servers[0]: needs exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)\n`,
  );
});

// Audit: cc-mcp took the first token of MCP_AUTH_TOKEN by splitting at commas only, while the bridge
// splits at commas and whitespace; with the tokens listed one per line or space-separated (as the
// bridge allows), cc-mcp sent both as one bearer token and got 401.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../dist/cli/run.js';
import { withBridge } from '../helpers.js';

const A = 'cli-audit-token-a-0123456789';
const B = 'cli-audit-token-b-0123456789';

async function cli(args, env) {
  const out = { stdout: '', stderr: '' };
  const code = await runCli(args, { out: (t) => (out.stdout += t), err: (t) => (out.stderr += t), readFile: async () => '', readStdin: async () => '', env, signal: new AbortController().signal }, '0');
  return { code, ...out };
}

test('bug: cc-mcp with MCP_AUTH_TOKEN holding two tokens separated by a space or a line break sent both as one and got 401 (exit 3); now it sends the first', { timeout: 60_000 }, () =>
  withBridge({ MCP_AUTH_TOKEN: `${A},${B}` }, async (bridge) => {
    for (const list of [`${A} ${B}`, `${A}\n${B}\n`, ` ${A} , ${B}`]) {
      const run = await cli(['--url', bridge.mcpUrl, 'health'], { MCP_AUTH_TOKEN: list });
      assert.deepEqual([run.code, run.stdout], [0, 'bridge is up; 0 computers linked\n'], JSON.stringify(list) + run.stderr);
    }
  }));

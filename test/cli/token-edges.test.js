// cc-mcp's bearer token at its edges (found by mutation testing), in this process against a real bridge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBridge } from '../helpers.js';
import { runCli } from '../../dist/cli/run.js';

async function cli(args, env) {
  const out = { stdout: '', stderr: '' };
  const io = { out: (t) => (out.stdout += t), err: (t) => (out.stderr += t), readFile: async () => '', readStdin: async () => '', env, signal: new AbortController().signal };
  return { code: await runCli(args, io, '0.0.0'), ...out };
}

test('CC_MCP_TOKEN is sent without the spaces around it; a blank one falls back to MCP_AUTH_TOKEN', () =>
  withBridge({ MCP_AUTH_TOKEN: 'cli-token-0123456789abcdef' }, async (bridge) => {
    assert.deepEqual(await cli(['--url', bridge.mcpUrl, 'probe'], { CC_MCP_TOKEN: '  cli-token-0123456789abcdef \t' }), { code: 0, stdout: 'No computers connected.\n', stderr: '' });
    assert.equal((await cli(['--url', bridge.mcpUrl, 'probe'], { CC_MCP_TOKEN: '   ', MCP_AUTH_TOKEN: 'cli-token-0123456789abcdef' })).code, 0);
    assert.equal((await cli(['--url', bridge.mcpUrl, 'probe'], { CC_MCP_TOKEN: 'wrong-token-0123456789abcdef' })).code, 3);
  }));

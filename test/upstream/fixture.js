// The stdio MCP server fixture as a CC_CONFIG server entry, and a minimal Streamable HTTP upstream.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

export const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-stdio-server.js', import.meta.url));

export const fixtureServer = (id, ...args) => ({ id, command: process.execPath, args: [FIXTURE, ...args] });

/**
 * A Streamable HTTP MCP server on a free loopback port that answers every request with one JSON body:
 * `answer(msg)` gives its `{ result }` or `{ error }`; notifications get 202, other methods than POST
 * 405. Closed when the test ends. Resolves to its `/mcp` URL.
 */
export async function jsonUpstream(t, answer) {
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(405).end();
    let body = '';
    for await (const chunk of req) body += chunk;
    const msg = JSON.parse(body);
    if (msg.id === undefined) return res.writeHead(202).end();
    const text = JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...answer(msg) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${server.address().port}/mcp`;
}

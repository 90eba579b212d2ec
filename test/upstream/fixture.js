// The stdio MCP server fixture as a CC_CONFIG server entry.
import { fileURLToPath } from 'node:url';

export const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-stdio-server.js', import.meta.url));

export const fixtureServer = (id, ...args) => ({ id, command: process.execPath, args: [FIXTURE, ...args] });

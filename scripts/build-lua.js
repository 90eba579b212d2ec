#!/usr/bin/env node
// Joins lua/mcp-computer/*.lua into dist/mcp-computer.lua, the one program the bridge serves at
// GET /mcp-computer.lua (run by npm run build after tsc). core.lua goes first at the top level, so
// its locals (constants, printing, pacing, M) are seen by every part; each other part follows in
// PARTS order inside its own do ... end block, so its top-level locals end with it (Lua allows 200
// per function) and what later parts use goes through M. Every file in the folder must be listed.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const partsDir = path.join(root, 'lua', 'mcp-computer');
export const PARTS = ['core', 'json', 'describe', 'exec', 'tools', 'files', 'key', 'link', 'cli'];

const onDisk = readdirSync(partsDir).filter((f) => f.endsWith('.lua')).map((f) => f.slice(0, -4)).sort();
const listed = [...PARTS].sort();
if (onDisk.join() !== listed.join()) {
  process.stderr.write(`build-lua: lua/mcp-computer/ holds ${onDisk.join(', ')} but PARTS lists ${listed.join(', ')}\n`);
  process.exit(2);
}

const read = (name) => {
  const text = readFileSync(path.join(partsDir, `${name}.lua`), 'utf8');
  return text.endsWith('\n') ? text : `${text}\n`;
};
let program = read(PARTS[0]);
for (const name of PARTS.slice(1)) program += `\ndo -- lua/mcp-computer/${name}.lua\n\n${read(name)}end\n`;

mkdirSync(path.join(root, 'dist'), { recursive: true });
writeFileSync(path.join(root, 'dist', 'mcp-computer.lua'), program);

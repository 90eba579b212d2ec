#!/usr/bin/env node
// cc-mcp: the operator CLI. Process I/O only; everything else is in run.ts.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { runCli } from './run.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const interrupt = new AbortController();
process.once('SIGINT', () => interrupt.abort());

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

runCli(
  process.argv.slice(2),
  {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    readFile: (path) => readFile(path, 'utf8'),
    readStdin,
    env: process.env,
    signal: interrupt.signal,
    isTTY: process.stdout.isTTY === true,
  },
  version,
).then(
  (status) => {
    process.exitCode = status;
  },
  (err: Error) => {
    process.stderr.write(`cc-mcp: ${err.stack ?? err.message}\n`);
    process.exitCode = 1;
  },
);

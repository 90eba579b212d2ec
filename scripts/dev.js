#!/usr/bin/env node
// `npm run dev` (after one `tsc -p tsconfig.json` and scripts/build-lua.js): runs `tsc --watch` and
// (re)starts `node dist/index.js` whenever the compiled output really changes (debounced; tsc
// re-emitting identical bytes does not restart), and joins the computer program again when a file
// in lua/mcp-computer/ changes. Arguments go to the bridge. Built-ins only.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, watch } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist/`;
const DEBOUNCE_MS = 300;
const say = (line) => process.stderr.write(`[dev] ${line}\n`);
const read = (file) => {
  try {
    return readFileSync(dist + file, 'utf8');
  } catch {
    return null; // deleted
  }
};

// What each emitted file holds now, so a change means different bytes.
const contents = new Map(
  readdirSync(dist, { recursive: true })
    .filter((file) => !file.endsWith('.map'))
    .map((file) => [file, read(file)]),
);

let bridge = null;
let stopping = false;
let queue = Promise.resolve();

function start() {
  const child = spawn(process.execPath, ['dist/index.js', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    if (bridge === child) bridge = null;
    if (!stopping && !child.replaced) say(`bridge exited (${signal ?? code}); waiting for changes`);
  });
  bridge = child;
}

function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 6000); // the bridge's own deadline is 5 s
    child.once('exit', () => resolve(clearTimeout(kill)));
    child.kill('SIGTERM');
  });
}

const changed = new Set();
let timer;
watch(dist, { recursive: true }, (_event, file) => {
  // the computer program is read at each GET /mcp-computer.lua: a new one needs no restart
  if (!file || file.endsWith('.map') || file === 'mcp-computer.lua') return;
  changed.add(file);
  clearTimeout(timer);
  timer = setTimeout(restart, DEBOUNCE_MS);
});

function restart() {
  const files = [...changed].filter((file) => {
    const now = read(file);
    const differs = now !== contents.get(file);
    contents.set(file, now);
    return differs;
  });
  changed.clear();
  if (files.length === 0) return;
  queue = queue.then(async () => {
    if (stopping) return;
    say(`changed: ${files.slice(0, 3).join(', ')}${files.length > 3 ? ` and ${files.length - 3} more` : ''}; restarting the bridge`);
    if (bridge) bridge.replaced = true;
    await stop(bridge);
    if (!stopping) start();
  });
}

async function shutdown(why, code = 0) {
  if (stopping) return;
  stopping = true;
  if (why) say(why);
  tsc.kill('SIGTERM');
  await stop(bridge);
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => shutdown());

// The computer program's parts: join them again (scripts/build-lua.js) when one changes.
let luaTimer;
watch(`${root}lua/mcp-computer`, () => {
  clearTimeout(luaTimer);
  luaTimer = setTimeout(() => {
    const join = spawn(process.execPath, [`${root}scripts/build-lua.js`], { cwd: root, stdio: 'inherit' });
    join.on('exit', (code) => say(code === 0 ? 'joined lua/mcp-computer/ into dist/mcp-computer.lua' : `scripts/build-lua.js failed (${code})`));
  }, DEBOUNCE_MS);
});

start();
const tscBin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const tsc = spawn(process.execPath, [tscBin, '-p', 'tsconfig.json', '--watch', '--preserveWatchOutput'], { cwd: root, stdio: 'inherit' });
tsc.on('exit', (code, signal) => shutdown(`tsc exited (${signal ?? code})`, 1));

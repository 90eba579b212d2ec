// Boots dist/mcp-computer.lua on CraftOS-PC (a real ComputerCraft runtime that
// runs CC:Tweaked's own ROM), headless, one process per computer. The runtime
// lives outside the repo: $CRAFTOS_PC_DIR, else <repo>/../shared/craftos-pc
// (also tried next to the main checkout when this is a git worktree).
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { PROGRAM, REPO } from './computer.js';
import { waitFor } from './waiters.js';

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Folders where the runtime may be, in order. */
export function candidateDirs(env = process.env, repo = REPO) {
  const dirs = [];
  if (env.CRAFTOS_PC_DIR) dirs.push(path.resolve(env.CRAFTOS_PC_DIR));
  dirs.push(path.resolve(repo, '..', 'shared', 'craftos-pc'));
  try {
    // In a git worktree the repo's parent is not the main checkout's parent.
    const common = execFileSync('git', ['-C', repo, 'rev-parse', '--path-format=absolute', '--git-common-dir'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    dirs.push(path.resolve(path.dirname(common), '..', 'shared', 'craftos-pc'));
  } catch {
    // not a git checkout: the other candidates stand
  }
  return dirs;
}

/** The runtime's folder, or null when it is not on this machine. */
export function findCraftos(env = process.env) {
  for (const dir of candidateDirs(env)) if (executable(path.join(dir, 'craftos'))) return dir;
  return null;
}

export const CRAFTOS_DIR = findCraftos();
export const HARD_LIMIT_S = 90; // no CraftOS process outlives this, whatever the test does

/**
 * One headless CraftOS-PC computer. `startup` is the Lua its startup.lua runs;
 * mcp-computer.lua is copied next to it. Everything it draws is kept in
 * `output` (rows padded to the screen width, redrawn as the screen changes:
 * search it, do not read it as a transcript).
 */
export class CraftosComputer {
  /** `root`: the folder of a computer that has stopped, to start it again on its own files (a restart). */
  constructor({ id = 1, startup, config = {}, program = true, files = {}, root }) {
    this.root = root ?? mkdtempSync(path.join(tmpdir(), 'craftos-'));
    this.files = path.join(this.root, 'files');
    this.data = path.join(this.root, 'data');
    if (root === undefined) {
      mkdirSync(this.files);
      mkdirSync(path.join(this.data, 'config'), { recursive: true });
      // CraftOS-PC's own watchdog is 17 s; CC:Tweaked's is about 7 s.
      writeFileSync(path.join(this.data, 'config', 'global.json'), JSON.stringify({ abortTimeout: 7000, ...config }));
      if (program) copyFileSync(PROGRAM, path.join(this.files, 'mcp-computer.lua'));
      writeFileSync(path.join(this.files, 'startup.lua'), startup);
      for (const [name, content] of Object.entries(files)) writeFileSync(path.join(this.files, name), content);
    }
    this.output = '';
    this.exit = null;
    this.waiters = new Set();
    const craftos = path.join(CRAFTOS_DIR, 'craftos');
    const args = ['-s', 'KILL', String(HARD_LIMIT_S), craftos, '--headless', '-d', this.data, '--id', String(id), '--start-dir', this.files];
    this.child = spawn('timeout', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const onData = (buf) => {
      this.output += buf.toString('utf8');
      for (const w of this.waiters) w.check();
    };
    this.child.stdout.on('data', onData);
    this.child.stderr.on('data', onData);
    this.child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      for (const w of this.waiters) w.check();
    });
  }

  /** Resolves once `needle` shows up after position `from` of the output. */
  waitForOutput(needle, ms = 20000, from = 0) {
    return waitFor(this.waiters, () => {
      const at = this.output.indexOf(needle, from);
      if (at >= 0) return at;
      if (this.exit) throw new Error(`CraftOS-PC exited (${JSON.stringify(this.exit)}) before "${needle}"; screen:\n${this.screen()}`);
      return undefined;
    }, ms, () => `no "${needle}" within ${ms} ms; screen:\n${this.screen()}`);
  }

  waitForExit(ms = 20000) {
    return waitFor(this.waiters, () => this.exit ?? undefined, ms, () => `CraftOS-PC still running after ${ms} ms`);
  }

  /**
   * The output as text lines: each row's last drawing, padding trimmed (a
   * long line wraps onto the next row, as on screen).
   */
  lines() {
    return this.output
      .split('\n')
      .map((row) => (row.split('\r').filter((part) => part !== '').pop() ?? '').trimEnd())
      .filter((row) => row !== '');
  }

  /** The last rows, for error messages. */
  screen() {
    return this.lines().slice(-30).join('\n');
  }

  /** SIGKILL to our own process group (timeout and its craftos child). */
  kill() {
    if (this.exit) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  cleanup() {
    this.kill();
    rmSync(this.root, { recursive: true, force: true });
  }
}

// What the CraftOS-PC test files share: the skip line, the bridge they link to, the startup that
// runs mcp-computer, and one bridge with one linked computer per describe block.

/** The full status line once linked: the screen is streamed word by word as it is drawn. */
export const READY = 'waiting for requests... Press Ctrl+T to stop.';

/**
 * node:test's describe itself when CraftOS-PC is on this machine (so a failing suite's location is its
 * test file, as for describeLua); otherwise one skipped test that says so.
 */
export const NOT_FOUND = 'CraftOS-PC not found (set CRAFTOS_PC_DIR or put it in ../shared/craftos-pc)';
export const describeCraftos = CRAFTOS_DIR ? describe : (name) => test(name, { skip: NOT_FOUND }, () => {});

/** The bridge's config for these tests: ports chosen by the system, `env` on top. */
export const bridgeConfig = (env = {}) => loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error', ...env });

/** The startup.lua line that runs mcp-computer against `url` with `flags`. */
export const runLine = (url, flags = []) => `shell.run("mcp-computer", ${[url, ...flags].map((a) => JSON.stringify(a)).join(', ')})\n`;

/**
 * In a describe block: before() starts a bridge (bridgeConfig(env)) and computer `id` whose startup
 * runs `pre`, mcp-computer against the bridge with `flags`, then `post`, and waits until `ready`
 * (default: the READY line); after() stops both. Returns {bridge, pc}, filled in by before(); a test
 * that restarts the bridge puts the new one in `bridge` for after() to close.
 */
export function useLinkedCraftos({ id, env = {}, flags = [], pre = '', post = 'os.shutdown()\n', config, files, ready }) {
  const ctx = { bridge: null, pc: null };
  before(async () => {
    ctx.bridge = await startBridge(bridgeConfig(env));
    ctx.pc = new CraftosComputer({ id, config, files, startup: pre + runLine(ctx.bridge.linkUrl, flags) + post });
    await (ready ? ready(ctx) : ctx.pc.waitForOutput(READY, 60000));
  });
  after(async () => {
    ctx.pc?.cleanup();
    await ctx.bridge?.close(100);
  });
  return ctx;
}

export { REPO };

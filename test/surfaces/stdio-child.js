// `node dist/index.js --stdio` as a real child process: every stdout line parsed as one JSON message
// (a line that is not fails the test), stderr kept, helpers to wait for a message or an answer.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers.js';
import { VARIABLES } from '../../dist/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-test', version: '0' } };

/** Spawns the bridge with --stdio; our variables come only from `env`; `stdout`: a file descriptor instead of a pipe. */
export function spawnStdio(env = {}, { stdout = 'pipe' } = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js', '--stdio'], {
    cwd: ROOT,
    env: { ...base, CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug', ...env },
    stdio: ['pipe', stdout, 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  const messages = [];
  const waiters = new Set();
  // the text after the last newline seen: only it and the new chunk are split, so reading the whole
  // output is linear in its size (each byte scanned once, each line parsed once)
  let partial = '';
  child.stdout?.setEncoding('utf8').on('data', (c) => {
    out.stdout += c;
    if (!c.includes('\n')) {
      partial += c;
      return;
    }
    const lines = (partial + c).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      // every stdout line must be one JSON message: JSON.parse throws (failing the test) otherwise
      const message = JSON.parse(line);
      messages.push(message);
      for (const w of [...waiters]) {
        if (w.predicate(message)) {
          waiters.delete(w);
          w.resolve(message);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (out.stderr += c));
  child.stdin.on('error', () => {});
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal, ...out }));
  // 'exit' can come before stdout has been read to its end (a host reading slowly, a loaded machine):
  // 'close' comes once the process has exited and stdout and stderr have ended, every line parsed
  const closed = once(child, 'close').then(([code, signal]) => ({ code, signal, ...out }));
  return Object.assign(child, {
    out,
    messages,
    /** The exit; lines the bridge wrote may still be unread (see `closed`). */
    exited,
    /** The exit with all of stdout read: assert on `messages` after this (never resolves while stdout is paused). */
    closed,
    /** Writes raw text to stdin. */
    raw: (text) => child.stdin.write(text),
    /** Writes one message as one line. */
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    /** The next message (already received or future) matching the predicate. */
    next(predicate) {
      const seen = messages.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.add({ predicate, resolve }));
    },
    answer: (id) => child.next((m) => m.id === id && ('result' in m || 'error' in m)),
    async linkUrl() {
      await until(() => /^Computer link: ws:\/\/\S+/m.test(out.stderr));
      return /^Computer link: (ws:\/\/\S+) /m.exec(out.stderr)[1];
    },
  });
}

/** Kills `child` at the end of test `t` if it is still running. */
export function killAtEnd(t, child) {
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });
}

/** Every answer in `messages`, by id: how many times each id was answered. */
export function answerCounts(messages) {
  const counts = new Map();
  for (const m of messages) if (m.id !== undefined && ('result' in m || 'error' in m)) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  return counts;
}

export async function run(env, fn) {
  const child = spawnStdio(env);
  try {
    return await fn(child);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await child.exited;
    }
  }
}


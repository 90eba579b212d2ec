// MCP_SESSION_KEY_FILE made by several processes at once. The bug: two bridges started together
// with the same missing file each made a key and renamed it over the path; the last rename won, so
// the other bridge signed its session ids with a key no file held: its sessions ended at its next
// start, and the two bridges never verified each other's ids. Now the file is linked in (link()
// fails when the path exists): exactly one key wins and every loser reads the winner's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initialize, openStream, startProcess, stop, tempDir } from './bridge-process.js';

const RACER = fileURLToPath(new URL('./session-key-racer.js', import.meta.url));
const ROUNDS = 200;
const RACERS = 3;

/** A racer process; `next()` resolves with its next JSON answer line. */
async function startRacer(t, command = [process.execPath, RACER]) {
  const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    child.stdin.end();
    child.kill();
  });
  const waiting = [];
  const ready = [];
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line === 'ready') ready.shift()?.();
      else waiting.shift()(JSON.parse(line));
    }
  });
  await new Promise((resolve) => ready.push(resolve));
  return {
    child,
    next: () => new Promise((resolve) => waiting.push(resolve)),
  };
}

/** `rounds` times, every racer given one new missing path in the same turn; counts what went wrong. */
async function race(racers, dir, rounds) {
  const counts = { split: 0, notOneMaker: 0, errors: [] };
  for (let round = 0; round < rounds; round++) {
    const path = join(dir, `session-${round}.key`);
    const answers = racers.map((racer) => racer.next());
    // the same line to every racer in one turn: they call loadSessionKey together
    for (const racer of racers) racer.child.stdin.write(`${path}\n`);
    const got = await Promise.all(answers);
    counts.errors.push(...got.filter((answer) => answer.error !== undefined).map((answer) => `round ${round}: ${answer.error}`));
    if (!existsSync(path)) {
      // before the fix a loser's clean-up could remove the winner's same-named temporary file
      counts.errors.push(`round ${round}: no file made`);
      continue;
    }
    const text = readFileSync(path, 'latin1');
    assert.match(text, /^[0-9a-f]{64}\n$/);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const inFile = createHash('sha256').update(Buffer.from(text.trim(), 'hex')).digest('hex');
    if (got.some((answer) => answer.digest !== inFile)) counts.split++;
    if (got.filter((answer) => answer.made).length !== 1) counts.notOneMaker++;
  }
  assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith('.tmp')), [], 'no temporary file is left');
  return counts;
}

test('bug: two bridges making a missing MCP_SESSION_KEY_FILE at once: the last rename won and the other signed sessions with a key no file held (real processes racing on one path, repeated)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'session-key-race-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const racers = await Promise.all(Array.from({ length: RACERS }, () => startRacer(t)));
  const { split, notOneMaker, errors } = await race(racers, dir, ROUNDS);
  // counted over every round first, so a failure says how often the race was lost
  assert.deepEqual(errors, []);
  assert.equal(split, 0, `in ${split} of ${ROUNDS} rounds a process holds a key the file does not`);
  assert.equal(notOneMaker, 0, `in ${notOneMaker} of ${ROUNDS} rounds not exactly one process made the file`);
});

// unshare(1) puts each racer in its own PID namespace, where it is PID 1 as a bridge in a container is
const PID_ONE = ['unshare', '--pid', '--fork', '--kill-child', process.execPath, RACER];
const pidOneWorks = () => spawnSync(PID_ONE[0], [...PID_ONE.slice(1, 4), process.execPath, '-e', 'process.exit(process.pid === 1 ? 0 : 3)']).status === 0;

test('bug: bridges in containers (each PID 1) making a missing MCP_SESSION_KEY_FILE on a shared volume at once: the temp file was named by the pid, so all but one failed their start with EEXIST (real processes in PID namespaces)', async (t) => {
  if (!pidOneWorks()) {
    t.skip('unshare --pid needs root (or user namespaces) here: not run');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'session-key-race-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const racers = await Promise.all(Array.from({ length: 2 }, () => startRacer(t, PID_ONE)));
  const { split, notOneMaker, errors } = await race(racers, dir, 50);
  assert.deepEqual(errors, [], `${errors.length} failures in 50 rounds of 2 starts`);
  assert.equal(split, 0);
  assert.equal(notOneMaker, 0);
});

test('bug (real bridges): two bridges started at once on one missing MCP_SESSION_KEY_FILE sign with the same key: each verifies the other\'s session ids, and so does the next start', async (t) => {
  const space = tempDir(t);
  const keyFile = join(space.dir, 'session.key');
  for (let round = 0; round < 3; round++) {
    rmSync(keyFile, { force: true });
    const [a, b] = await Promise.all([startProcess(space, { MCP_SESSION_KEY_FILE: keyFile }), startProcess(space, { MCP_SESSION_KEY_FILE: keyFile })]);
    const logs = [a, b].map((bridge) => bridge.out.stdout + bridge.out.stderr);
    assert.equal(logs.filter((log) => /session ids signed with the key made now in/.test(log)).length, 1, `round ${round}: one made the file, ${logs.join('\n')}`);
    assert.equal(logs.filter((log) => /session ids signed with the key read from/.test(log)).length, 1, `round ${round}: the other read it`);
    const idA = await initialize(a.mcpUrl);
    const idB = await initialize(b.mcpUrl);
    for (const [url, id] of [[a.mcpUrl, idB], [b.mcpUrl, idA]]) {
      const stream = await openStream(url, id);
      assert.equal(stream.status, 200, `round ${round}: ${stream.body}`);
      stream.close();
    }
    await Promise.all([stop(a), stop(b)]);
    const next = await startProcess(space, { MCP_SESSION_KEY_FILE: keyFile });
    for (const id of [idA, idB]) {
      const stream = await openStream(next.mcpUrl, id);
      assert.equal(stream.status, 200, `round ${round}: ${stream.body}`);
      stream.close();
    }
    await stop(next);
  }
  assert.deepEqual(readdirSync(space.dir), ['session.key'], 'no temporary file is left');
});

// A new pin is on disk before its hello-ok: the bridge answers a hello that pinned an id only once
// the CC_LINK_PINS_FILE write holding that pin has finished (synced, renamed, the directory synced).
// The bug: hello-ok went out first and the file was written later, so a bridge that crashed in that
// moment restarted without the pin, and the first keyed hello for the id after the restart (anyone's)
// took it. With real bridge processes, a real file, and SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { FakeComputer, startTestBridge, until } from '../helpers.js';
import { PinsWriter, parsePins } from '../../dist/link/pins-file.js';
import { attempt, request, sha } from './pins-helpers.js';
import { startProcess, stop, tempDir } from '../surfaces/bridge-process.js';
import { LUA_PROGRAM_PATH } from '../../dist/bridge.js';
import { startLinkServer } from '../../dist/link/server.js';
import { LinkRegistry } from '../../dist/link/registry.js';
import { KeyPins } from '../../dist/link/pins.js';
import { createLogger } from '../../dist/log.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const OTHER = 'impostorKey_0123456789abcdefABCD';
const keyOf = (id) => `computer${id}Key_0123456789abcdefABCDEF`;

async function start(space, file) {
  const child = await startProcess(space, { CC_LINK_PINS_FILE: file, LOG_LEVEL: 'info' });
  const linkUrl = /^Computer link: (ws:\/\/\S+) /m.exec(child.out.stdout)[1];
  return Object.assign(child, { linkUrl });
}

test('bug: a pin made just before a crash was lost (hello-ok went out before the pins file held it); now the file holds the pin when hello-ok arrives, and a SIGKILL right then keeps it', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  const bridge = await start(space, file);
  // each new pin is in the file when its hello-ok arrives (read at once, nothing awaited in between)
  for (let id = 1; id <= 10; id++) {
    const { c, first } = await attempt(bridge, id, keyOf(id));
    assert.equal(first.type, 'hello-ok');
    assert.ok(readFileSync(file, 'utf8').includes(`\n${id} ${sha(keyOf(id))}\n`), `pin ${id} is on disk at its hello-ok`);
    await c.close();
  }
  // a relink with the pinned key writes nothing and is answered as before
  const again = await attempt(bridge, 3, keyOf(3));
  assert.equal(again.first.type, 'hello-ok');
  await again.c.close();

  // the crash: SIGKILL as soon as hello-ok for a new id arrives
  const last = new FakeComputer(bridge.linkUrl, { computerId: 11 });
  const answered = last.link({ type: 'hello', computerId: 11, key: KEY });
  await last.next((f) => f.type === 'hello-ok' && (bridge.kill('SIGKILL'), true));
  await answered;
  assert.equal((await bridge.exited).signal, 'SIGKILL');

  const restarted = await start(space, file);
  assert.match(restarted.out.stdout + restarted.out.stderr, /11 pins read from/);
  const impostor = await attempt(restarted, 11, OTHER);
  assert.equal(impostor.first.code, 'key_mismatch', 'the pin made just before the crash holds');
  const real = await attempt(restarted, 11, KEY);
  assert.equal(real.first.type, 'hello-ok');
  await real.c.close();
  await stop(restarted);
});

/**
 * Holds every thread of libuv's pool (UV_THREADPOOL_SIZE, 4 by default) of this process in an open()
 * of a FIFO that has no writer yet, so the in-process bridge's file writes cannot progress until
 * release(): a write "under way" for as long as a test needs, with the real file code. release()
 * opens each FIFO for writing, which lets the blocked opens return.
 */
let held = 0;
function holdThreadPool(dir) {
  const size = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const round = held++;
  const fifos = Array.from({ length: size }, (_, i) => join(dir, `fifo${round}.${i}`));
  for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
  const readers = fifos.map((fifo) => open(fifo, 'r'));
  return async () => {
    // read-write and non-blocking: never waits, even for a reader's open not started yet
    const writers = fifos.map((fifo) => openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
    for (const handle of await Promise.all(readers)) await handle.close();
    for (const fd of writers) closeSync(fd);
  };
}

test('PinsWriter: 1,000 changes during a write make 2 writes; each change\'s promise resolves once a write holding it has ended', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  const table = new Map();
  const writer = new PinsWriter(file, () => [...table], (line) => assert.fail(line));
  const done = [];
  for (let id = 0; id < 1000; id++) {
    table.set(id, sha(keyOf(id)));
    const changed = writer.changed();
    done.push(changed.then(() => assert.ok(readFileSync(file, 'utf8').includes(`\n${id} ${sha(keyOf(id))}\n`), `${id} written when its promise resolves`)));
  }
  await Promise.all(done);
  assert.equal(writer.writes, 2);
  assert.equal(parsePins(readFileSync(file, 'utf8'), file, 1000).size, 1000);
  // a change after the writes is a write of its own
  table.delete(5);
  await writer.changed();
  assert.equal(writer.writes, 3);
  assert.equal(readFileSync(file, 'utf8').includes('\n5 '), false);
});

test('bug: the pins file\'s temporary file was named by the path and the pid alone, so a bridge removed another\'s (PID 1 in two containers sharing the file) in the middle of its write; now each write has its own name', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  // what another bridge with this pid (another container's PID 1) is writing right now
  const theirs = `${file}.${process.pid}.tmp`;
  writeFileSync(theirs, 'the other bridge\'s write in progress\n', { mode: 0o600 });
  const table = new Map([[7, sha(keyOf(7))]]);
  const writer = new PinsWriter(file, () => [...table], (line) => assert.fail(line));
  await writer.changed();
  assert.equal(readFileSync(theirs, 'utf8'), 'the other bridge\'s write in progress\n');
  assert.deepEqual([...parsePins(readFileSync(file, 'utf8'), file, 10)], [[7, sha(keyOf(7))]]);
  // nothing of ours is left beside it
  assert.deepEqual(readdirSync(space.dir).sort(), ['pins', 'pins.' + process.pid + '.tmp']);
});

test('a hello waiting for its pin\'s write: a pin reset meanwhile closes it 4410 instead of hello-ok; a socket closed meanwhile is dropped; waiting hellos count toward CC_MAX_LINKS; relinks with the same key wait for the same write', async (t) => {
  const space = { dir: mkdtempSync(join(tmpdir(), 'pins-durable-')) };
  const file = join(space.dir, 'pins');
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file, CC_MAX_LINKS: '2' });
  // closed (its last pins written) before its directory is removed
  t.after(async () => {
    await bridge.close();
    rmSync(space.dir, { recursive: true, force: true });
  });
  const metric = async (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text())[1]);

  // 1. a reset while the hello waits for the write that holds its pin
  let release = holdThreadPool(space.dir);
  const waiting = new FakeComputer(bridge.linkUrl, { computerId: 1 });
  const waitingAnswer = waiting.link({ type: 'hello', computerId: 1, key: KEY });
  await until(() => bridge.pins.has(1));
  // a relink with the same key in the meantime waits for the same write
  const relink = new FakeComputer(bridge.linkUrl, { computerId: 1 });
  const relinkAnswer = relink.link({ type: 'hello', computerId: 1, key: KEY });
  // CC_MAX_LINKS=2: the two waiting hellos count, so a third id is refused busy
  const third = await attempt(bridge, 3, OTHER);
  assert.equal(third.first.code, 'busy');
  assert.match(third.first.error, /the bridge already has 2 links \(CC_MAX_LINKS\)/);
  assert.equal(bridge.links.size, 0, 'nothing linked before the write');
  // the reset is answered once the file holds it, so only after the pool is released
  const resetting = request(bridge, '/pins/1/reset');
  await until(() => !bridge.pins.has(1));
  await release();
  assert.equal((await resetting).body.wasPinned, true);
  assert.deepEqual(await waiting.closed, { code: 4410, reason: 'pin_reset: its key is no longer trusted here; give this computer a new key (set mcp.key new), then start mcp-computer again' });
  assert.deepEqual(await relink.closed, { code: 4410, reason: 'pin_reset: its key is no longer trusted here; give this computer a new key (set mcp.key new), then start mcp-computer again' });
  assert.equal(waiting.received.some((f) => f.type === 'hello-ok'), false);
  void waitingAnswer;
  void relinkAnswer;
  assert.equal(bridge.links.get(1), undefined);
  assert.ok(bridge.logs.some((l) => /\(computer 1\) closed before hello-ok: its pin was reset meanwhile/.test(l)), bridge.logs.join('\n'));

  // 2. the computer goes while its hello waits: nothing is linked, its place is given back
  release = holdThreadPool(space.dir);
  const gone = new FakeComputer(bridge.linkUrl, { computerId: 2 });
  void gone.link({ type: 'hello', computerId: 2, key: KEY });
  await until(() => bridge.pins.has(2));
  await gone.close();
  await release();
  await until(async () => (await metric('cc_link_pins_file_writes_total')) >= 3);
  assert.equal(bridge.links.get(2), undefined);
  const after = await attempt(bridge, 2, KEY);
  assert.equal(after.first.type, 'hello-ok', 'the pin made for it holds; its key links');
  const four = await attempt(bridge, 4, OTHER);
  assert.equal(four.first.type, 'hello-ok', 'the places of the hellos that waited were given back');
  assert.ok(readFileSync(file, 'utf8').includes(`\n4 ${sha(OTHER)}\n`));
  await Promise.all([after.c.close(), four.c.close()]);
});

test('bug: a hello that waited past the hello timeout for its pin\'s CC_LINK_PINS_FILE write was logged as "sent no hello" and closed 1008 \'no hello\'; now the log names the slow write and the close is 1013 (try again)', { timeout: 60_000 }, async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  const lines = [];
  const log = createLogger('debug', (l) => lines.push(l));
  const pins = new KeyPins(100);
  const writer = new PinsWriter(file, () => pins.entries(), (line) => lines.push(line));
  pins.onChange = () => writer.changed();
  const server = await startLinkServer(new LinkRegistry(), log, { host: '127.0.0.1', port: 0, heartbeatMs: 60_000, maxFrameBytes: 1 << 20, helloTimeoutMs: 200, luaProgramPath: LUA_PROGRAM_PATH, pins });
  t.after(() => server.close());
  // the write cannot start while the thread pool is held, so the hello outlives its timer
  const release = holdThreadPool(space.dir);
  const computer = new FakeComputer(`ws://127.0.0.1:${server.address.port}`, { computerId: 7 });
  void computer.link({ type: 'hello', computerId: 7, key: KEY });
  const closed = await computer.closed;
  await release();
  await writer.flush();
  assert.deepEqual(closed, { code: 1013, reason: 'try again later: the pins file write is slow' });
  assert.equal(computer.received.some((f) => f.type === 'hello-ok'), false);
  assert.ok(lines.some((l) => /link from 127\.0\.0\.1:\d+: its hello waited more than 200 ms for the CC_LINK_PINS_FILE write that holds its new pin; closing/.test(l)), lines.join('\n'));
  assert.ok(!lines.some((l) => l.includes('sent no hello')), lines.join('\n'));
  // the pin was kept and written: the computer's next try links with its key
  assert.ok(readFileSync(file, 'utf8').includes(`7 ${sha(KEY)}\n`));
  const again = new FakeComputer(`ws://127.0.0.1:${server.address.port}`, { computerId: 7 });
  assert.equal((await again.link({ type: 'hello', computerId: 7, key: KEY })).type, 'hello-ok');
  await again.close();
});

test('bug: a hello waiting for a pins file write that never ended kept its CC_MAX_LINKS slot after its socket closed, so a stuck write made the bridge refuse every computer as busy (found by the audit)', { timeout: 60_000 }, async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  const log = createLogger('error', () => {});
  const pins = new KeyPins(100);
  const writer = new PinsWriter(file, () => pins.entries(), () => {});
  pins.onChange = () => writer.changed();
  const limits = { maxLinks: 2, maxLinksPerAddress: Infinity, maxPendingHellos: Infinity, maxPendingHellosPerAddress: Infinity, helloRate: Infinity };
  const server = await startLinkServer(new LinkRegistry(), log, { host: '127.0.0.1', port: 0, heartbeatMs: 60_000, maxFrameBytes: 1 << 20, helloTimeoutMs: 200, luaProgramPath: LUA_PROGRAM_PATH, pins, limits });
  t.after(() => server.close());
  // the write cannot start while the thread pool is held: two new pins wait, their hellos time out
  const release = holdThreadPool(space.dir);
  try {
    for (const computerId of [7, 8]) {
      const waiting = new FakeComputer(`ws://127.0.0.1:${server.address.port}`, { computerId });
      void waiting.link({ type: 'hello', computerId, key: KEY });
      assert.equal((await waiting.closed).code, 1013);
    }
    // both sockets are gone, the write still hangs: a keyless hello (no pin to write) takes a slot
    // (a few tries: the server may see a close a moment after the computer does)
    let answer = null;
    for (let i = 0; i < 20 && answer?.type !== 'hello-ok'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      const next = new FakeComputer(`ws://127.0.0.1:${server.address.port}`, { computerId: 9 });
      answer = await next.link({ type: 'hello', computerId: 9 });
      await next.close();
    }
    assert.equal(answer.type, 'hello-ok', JSON.stringify(answer));
  } finally {
    await release();
    await writer.flush();
  }
});

test('bug: a crash during a pins file write left its temporary file (<file>.<pid>.<random>.tmp) behind for good; the start now removes ours that are older than 10 minutes, and leaves a young one (another bridge\'s write in progress) and anything not named as ours', { timeout: 60_000 }, async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  writeFileSync(file, `3 ${sha(KEY)}\n`, { mode: 0o600 });
  const old = new Date(Date.now() - 11 * 60_000);
  const write = (name, when) => {
    writeFileSync(join(space.dir, name), `3 ${sha(KEY)}\n`, { mode: 0o600 });
    if (when) utimesSync(join(space.dir, name), when, when);
  };
  write('pins.4242.0123456789ab.tmp', old); // a crashed write: removed
  write('pins.1.tmp', old); // an older build's name: removed
  write('pins.1.abcdefabcdef.tmp'); // young: another bridge sharing the file is writing it now
  write('pins.backup.tmp', old); // not our name
  write('pins.4242.0123456789ab.tmp.keep', old);
  write('other.4242.0123456789ab.tmp', old);
  mkdirSync(join(space.dir, 'pins.7.fedcba987654.tmp'));
  utimesSync(join(space.dir, 'pins.7.fedcba987654.tmp'), old, old); // a directory: never ours
  // closed before tempDir's hook removes the directory
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  try {
    assert.deepEqual(readdirSync(space.dir).sort(), ['other.4242.0123456789ab.tmp', 'pins', 'pins.1.abcdefabcdef.tmp', 'pins.4242.0123456789ab.tmp.keep', 'pins.7.fedcba987654.tmp', 'pins.backup.tmp']);
    assert.ok(bridge.logs.some((l) => l.includes(`removed 2 temporary files a write of ${file} left behind (not modified for 10 minutes: a crash during the write): `) && l.includes('pins.4242.0123456789ab.tmp') && l.includes('pins.1.tmp')), bridge.logs.join('\n'));
    assert.equal(bridge.pins.has(3), true);
  } finally {
    await bridge.close();
  }
});

test('bug: hellos for new ids at a steady pace each rewrote the whole pins file (synced) back to back; now a write for new pins starts CC_LINK_PIN_WRITE_MS after the last one ended at the soonest and holds every pin made meanwhile, and each hello-ok still comes only once the file holds its pin', { timeout: 90_000 }, async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file, CC_LINK_PIN_WRITE_MS: '2000' });
  const computers = [];
  t.after(async () => {
    for (const c of computers) await c.close();
    await bridge.close();
  });
  const writes = async () => Number(/^cc_link_pins_file_writes_total (\d+)$/m.exec(await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text())[1]);
  // hello-ok only once the file holds the pin: read the file as the answer arrives
  const link = (id) => {
    const c = new FakeComputer(bridge.linkUrl, { computerId: id });
    computers.push(c);
    return c.link({ type: 'hello', computerId: id, key: keyOf(id) }).then((first) => {
      assert.equal(first.type, 'hello-ok', `computer ${id}`);
      assert.ok(readFileSync(file, 'utf8').includes(`\n${id} ${sha(keyOf(id))}\n`), `computer ${id}'s pin is on disk when its hello-ok arrives`);
    });
  };
  // the first pin after none: written at once
  await link(1);
  assert.equal(await writes(), 1);
  // 30 more new ids, one every 25 ms or so (each sent once the one before is pinned in memory, none
  // waiting for the one before's answer): before, each found the writer idle and had a write of its own
  const answers = [];
  for (let id = 2; id <= 31; id++) {
    answers.push(link(id));
    await until(() => bridge.pins.has(id));
    await sleep(25);
  }
  await Promise.all(answers);
  const made = (await writes()) - 1;
  // every pin made within 2 s of the last write goes in one write (a slow run: a few)
  assert.ok(made <= 5, `${made} writes for 30 pins`);
  assert.equal(parsePins(readFileSync(file, 'utf8'), file, 100).size, 31);
});

test('PinsWriter.pinned: a write for pins waits pinWriteMs after the last one ended and holds every pin made meanwhile; changed() (the operator\'s) and flush() write at once, holding them too', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  const table = new Map();
  const writer = new PinsWriter(file, () => [...table], (line) => assert.fail(line));
  writer.pinWriteMs = 3_600_000;
  const onDisk = (id) => readFileSync(file, 'utf8').includes(`\n${id} ${sha(keyOf(id))}\n`);
  // no write before: at once
  table.set(0, sha(keyOf(0)));
  await writer.pinned();
  assert.equal(writer.writes, 1);
  assert.equal(onDisk(0), true);
  // within the hour: held, each resolving with the write that holds it
  const done = [];
  for (let id = 1; id <= 100; id++) {
    table.set(id, sha(keyOf(id)));
    done.push(writer.pinned().then(() => assert.equal(onDisk(id), true, `${id} written when its promise resolves`)));
  }
  await sleep(50);
  assert.equal(writer.writes, 1, 'nothing written yet');
  assert.equal(onDisk(1), false);
  // the operator's change is written at once, and the pins waiting go in the same write
  table.delete(0);
  await writer.changed();
  await Promise.all(done);
  assert.equal(writer.writes, 2);
  assert.equal(onDisk(0), false);
  // a pin after that waits again; flush() (shutdown) writes it at once
  table.set(200, sha(keyOf(200)));
  const later = writer.pinned();
  await sleep(50);
  assert.equal(writer.writes, 2);
  await writer.flush();
  await later;
  assert.equal(writer.writes, 3);
  assert.equal(onDisk(200), true);
});

// Strings a computer or a client chooses, in log lines and error messages, are bounded with
// src/jsonrpc/quote.ts (60 characters and the length): a computer's label, its job ids, peripheral
// names and response ids in the log, and the label a tool call names in "matches N computers".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, callTool, linkComputer, until, withBridge } from '../helpers.js';

// hello and info frames may carry labels of up to 1,024 characters
const LONG = 'L'.repeat(980) + '\n2026-01-01T00:00:00.000Z warn forged'; // 1,017 characters
const CUT = /"L{59}\.\.\. \(1020 characters\)/; // its JSON text: 1,017 + the two quotes + the \n escaped as two
const MID = 'M'.repeat(900) + '\n2026-01-01T00:00:00.000Z warn forged';
const MID_CUT = /"M{59}\.\.\. \(940 characters\)/;

test('bug: a computer label was printed whole and raw in log lines (linked, label changes, unlinked: a 1 KB label with a line break forged a line); now quoted and cut at 60 characters', () =>
  withBridge({ LOG_LEVEL: 'debug' }, async (bridge) => {
    const computer = new FakeComputer(bridge.linkUrl, { computerId: 8 });
    assert.equal((await computer.link({ type: 'hello', computerId: 8, computerLabel: LONG, version: '0.1.0\n2026-01-01T00:00:00.000Z warn forged' })).type, 'hello-ok');
    computer.send({ type: 'info', computerLabel: 'short', peripherals: [] });
    await until(() => bridge.links.get(8)?.label === 'short');
    computer.send({ type: 'info', computerLabel: MID, peripherals: [] });
    await until(() => bridge.links.get(8)?.label === MID);
    // a response to nothing, its id (up to the link's id limit) with a line break
    computer.send({ type: 'response', id: 'r\n2026-01-01T00:00:00.000Z warn forged', ok: true, result: null });
    await until(() => bridge.logs.some((l) => /matches no request in flight/.test(l)));
    await computer.close();
    await until(() => bridge.logs.some((l) => / unlinked 8 /.test(l)));

    const lines = bridge.logs.join('\n').split('\n');
    assert.ok(!lines.some((l) => l.startsWith('2026-01-01T00:00:00.000Z warn forged')), 'no forged line');
    assert.ok(lines.every((l) => l.length < 1000), `longest log line: ${Math.max(...lines.map((l) => l.length))} characters`);
    const linked = lines.find((l) => / linked 8 /.test(l));
    assert.match(linked, new RegExp(`linked 8 \\(Label: ${CUT.source}\\) from \\S+ \\(mcp-computer "0\\.1\\.0\\\\n2026-01-01T00:00:00\\.000Z warn forged"\\)$`));
    assert.ok(lines.some((l) => new RegExp(`computer 8 \\(Label: short\\): label ${CUT.source} -> "short"`).test(l)));
    assert.ok(lines.some((l) => new RegExp(`computer 8 \\(Label: ${MID_CUT.source}\\): label "short" -> ${MID_CUT.source}`).test(l)));
    assert.ok(lines.some((l) => / response "r\\n2026-01-01T00:00:00\.000Z warn forged" matches no request in flight/.test(l)));
    assert.ok(lines.some((l) => new RegExp(`unlinked 8 \\(Label: ${MID_CUT.source}\\): closed 1000`).test(l)));
    // a plain label reads as before
    const plain = await linkComputer(bridge, { computerId: 9, computerLabel: 'miner' });
    await until(() => bridge.logs.some((l) => /info linked 9 \(Label: miner\) from /.test(l)));
    // a label longer than an info frame may carry is refused at hello, saying so
    const huge = new FakeComputer(bridge.linkUrl, { computerId: 10 });
    const refused = await huge.link({ type: 'hello', computerId: 10, computerLabel: 'h'.repeat(5000) });
    assert.equal(refused.type, 'hello-error');
    assert.match(refused.error, /hello\.computerLabel must be at most 1024 characters \(got 5000\)/);
    await huge.closed;
    await plain.close();
  }));

test('bug: job ids and peripheral names were logged whole in a computer\'s changes; now cut at 60 characters', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 3 });
    const job = 'j'.repeat(128); // the longest job id a frame may carry
    const name = 'p'.repeat(200);
    computer.send({ type: 'info', computerLabel: null, peripherals: [{ name, types: ['monitor'] }], jobs: [{ job, kind: 'exec-lua', state: 'running', what: 'x' }] });
    await until(() => bridge.logs.some((l) => / job "j+/.test(l)));
    computer.send({ type: 'info', computerLabel: null, peripherals: [], jobs: [{ job, kind: 'exec-lua', state: 'done', what: 'x' }] });
    await until(() => bridge.logs.some((l) => /running -> done/.test(l)));
    computer.send({ type: 'info', computerLabel: null, peripherals: [], jobs: [] });
    await until(() => bridge.logs.some((l) => / gone/.test(l)));
    const text = bridge.logs.join('\n');
    assert.match(text, /computer 3 \(Label: null\): peripheral "p{59}\.\.\. \(202 characters\) attached, job "j{59}\.\.\. \(130 characters\) started/);
    assert.match(text, /peripheral "p{59}\.\.\. \(202 characters\) detached, job "j{59}\.\.\. \(130 characters\) running -> done/);
    assert.match(text, /job "j{59}\.\.\. \(130 characters\) gone/);
    assert.ok(!text.includes(job) && !text.includes(name));
    await computer.close();
  }));

test('bug: "The label ... matches N computers" echoed the whole label a call named; now cut at 60 characters', () =>
  withBridge({}, async (bridge) => {
    const label = 'twin-'.repeat(200);
    const a = await linkComputer(bridge, { computerId: 1, computerLabel: label });
    const b = await linkComputer(bridge, { computerId: 2, computerLabel: label });
    const result = await callTool(bridge, 'list-peripherals', { computer: label });
    assert.equal(result.isError, true);
    // the first sentence quotes the label the call named; the list of linked computers that follows
    // names them as they are (a computer's own label)
    const first = `The label "${label.slice(0, 59)}... (1002 characters) matches 2 computers (ids 1, 2); use "computerId".`;
    assert.equal(result.content[0].text.slice(0, first.length + 1), `${first} `);
    // short labels read as before
    const c = await linkComputer(bridge, { computerId: 3, computerLabel: 'dup' });
    const d = await linkComputer(bridge, { computerId: 4, computerLabel: 'dup' });
    assert.match((await callTool(bridge, 'list-peripherals', { computer: 'dup' })).content[0].text, /^The label "dup" matches 2 computers \(ids 3, 4\); use "computerId"\. /);
    for (const computer of [a, b, c, d]) await computer.close();
  }));

test('bug: a hello\'s version had no bound (a frame-sized version was kept whole and shown in list-computers); now at most 256 characters, a longer one refused with hello-error invalid, saying so', () =>
  withBridge({}, async (bridge) => {
    const huge = new FakeComputer(bridge.linkUrl, { computerId: 11 });
    const refused = await huge.link({ type: 'hello', computerId: 11, version: 'v'.repeat(257) });
    assert.equal(refused.type, 'hello-error');
    assert.equal(refused.code, 'invalid');
    assert.match(refused.error, /hello\.version must be at most 256 characters \(got 257\)/);
    const closed = await huge.closed;
    assert.equal(closed.code, 1008);
    assert.match(closed.reason, /^invalid hello: hello\.version must be at most 256 characters/);
    assert.equal(bridge.links.get(11), undefined, 'never linked');
    // the longest allowed version links and is shown whole
    const longest = 'w'.repeat(256);
    const ok = new FakeComputer(bridge.linkUrl, { computerId: 12 });
    assert.equal((await ok.link({ type: 'hello', computerId: 12, version: longest })).type, 'hello-ok');
    assert.equal(bridge.links.get(12).version, longest);
    const listed = await callTool(bridge, 'list-computers');
    assert.ok(listed.content[0].text.includes(`mcp-computer ${longest}`), listed.content[0].text);
    await ok.close();
  }));

test('bug: every info frame that changed something was logged, whole: a computer sending them without pause wrote a log line each (4,000 for 4,000), one attaching 1,024 peripherals a line of 1,024 changes', () =>
  withBridge({ LOG_LEVEL: 'info' }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 3, computerLabel: 'a' });
    const many = Array.from({ length: 1024 }, (_, i) => ({ name: `chest_${i}`, types: ['inventory'] }));
    computer.send({ type: 'info', computerLabel: 'a', peripherals: many });
    for (let i = 0; i < 4000; i++) computer.send({ type: 'info', computerLabel: i % 2 ? 'a' : 'b', peripherals: [] });
    // the last frame is handled: its label is the link's
    await until(() => bridge.links.get(3)?.label === 'a' && bridge.links.get(3)?.identity.peripherals?.length === 0);
    const lines = bridge.logs.filter((l) => l.includes('computer 3 (Label: '));
    assert.ok(lines.length >= 1 && lines.length <= 500, `${lines.length} lines for 4,001 info frames`);
    const attached = lines.find((l) => l.includes('attached'));
    assert.match(attached, /peripheral "chest_19" attached, and \d+ more$/);
    assert.ok(attached.length < 2000, `a line of ${attached.length} characters`);
    await computer.close();
  }));

// list-computers, GET /computers and probe-computers with many computers as rich as they may be: each
// identity is bounded by CC_MAX_IDENTITY_BYTES, and the whole list by MCP_LIST_COMPUTERS_MAX_CHARS (whole
// computers while they fit, then without peripherals and jobs, then none, with a note saying which).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonBytes } from '../../dist/link/identity-budget.js';
import { callTool, until, withBridge, FakeComputer } from '../helpers.js';

const base = (bridge) => bridge.mcpUrl.replace(/\/mcp$/, '');

/** A hello of about `size` bytes: peripherals with long distinct names and types, and 64 jobs. */
function richHello(computerId, { size = 1_000_000, label = `rich-${computerId}` } = {}) {
  const tag = String(computerId).padStart(4, '0');
  const count = Math.min(1024, Math.floor((size - 20_000) / 930));
  return {
    type: 'hello',
    computerId,
    computerLabel: label,
    kind: 'computer',
    advanced: true,
    host: 'ComputerCraft 1.109.0 (Minecraft 1.20.1)',
    ccVersion: '1.109.0',
    peripherals: Array.from({ length: count }, (_, i) => ({
      name: `p${tag}_${i}_`.padEnd(200, 'n'),
      types: Array.from({ length: 7 }, (_, t) => `t${tag}_${i}_${t}_`.padEnd(100, 'x')),
    })),
    jobs: Array.from({ length: 64 }, (_, j) => ({ job: `j${j}`, kind: 'exec-lua', state: 'running', what: 'w'.repeat(200) })),
  };
}

async function linkAll(bridge, hellos) {
  const computers = [];
  for (const hello of hellos) {
    const c = new FakeComputer(bridge.linkUrl, { computerId: hello.computerId, computerLabel: hello.computerLabel });
    const first = await c.link(hello);
    assert.equal(first.type, 'hello-ok', JSON.stringify(first));
    computers.push(c);
  }
  return computers;
}

const kept = ({ kind, advanced, host, ccVersion, peripherals, jobs, omitted }) => ({ kind, advanced, host, ccVersion, peripherals, jobs, ...(omitted ? { omitted } : {}) });

test(`at CC_MAX_LINKS links, each with a hello as rich as CC_MAX_FRAME_BYTES holds, list-computers, GET /computers and probe-computers answer every computer`, { timeout: 120_000 }, () =>
  withBridge({ CC_MAX_LINKS: '48', CC_HELLO_RATE: '1000', CC_LINK_MAX_BYTES_PER_S: String(64 << 20), LOG_LEVEL: 'error' }, async (bridge) => {
    const hellos = Array.from({ length: 48 }, (_, i) => richHello(i + 1));
    assert.ok(JSON.stringify(hellos[0]).length > 900_000 && JSON.stringify(hellos[0]).length < 1_048_576);
    const computers = await linkAll(bridge, hellos);
    for (const link of bridge.links.list()) assert.ok(jsonBytes(kept(link.identity)) <= 32768, `computer ${link.computerId} keeps ${jsonBytes(kept(link.identity))} bytes`);
    const listed = await callTool(bridge, 'list-computers');
    assert.equal(listed.structuredContent.computers.length, 48);
    assert.equal(listed.structuredContent.note, undefined, 'the default bound holds CC_MAX_LINKS (1000) full identities');
    assert.equal(listed.content[0].text.split('\n').length, 48);
    for (const entry of listed.structuredContent.computers) {
      assert.ok(entry.peripherals.length > 0 && entry.omitted.peripherals > 0 && entry.omitted.peripherals + entry.peripherals.length === hellos[0].peripherals.length);
    }
    // the answer per computer is bounded by the identity budget, not the hello
    assert.ok(JSON.stringify(listed).length < 48 * 3 * 32768, `${JSON.stringify(listed).length} characters`);
    const res = await fetch(`${base(bridge)}/computers`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cc-link-note'), null);
    assert.equal((await res.json()).length, 48);
    const probed = await callTool(bridge, 'probe-computers');
    assert.deepEqual(probed.structuredContent.computers.map((c) => c.status), Array(48).fill('pong'));
    for (const c of computers) await c.close();
  }));

test('MCP_LIST_COMPUTERS_MAX_CHARS: whole computers while they fit, then without peripherals and jobs (counted in omitted), then none; the note (and GET /computers\' CC-Link-Note) says which', { timeout: 120_000 }, () =>
  withBridge({ MCP_LIST_COMPUTERS_MAX_CHARS: '72000', CC_MAX_IDENTITY_BYTES: '4096', CC_HELLO_RATE: '1000', LOG_LEVEL: 'error' }, async (bridge) => {
    // 10 rich computers (about 8,000 characters each listed whole, 550 without lists), then 40 with
    // 1000-character labels (about 2,400 characters each)
    const hellos = [
      ...Array.from({ length: 10 }, (_, i) => richHello(i + 1, { size: 60_000 })),
      ...Array.from({ length: 40 }, (_, i) => ({ type: 'hello', computerId: 100 + i, computerLabel: `${i}`.padEnd(1000, 'l'), peripherals: [{ name: 'left', types: ['modem'] }], jobs: [] })),
    ];
    const computers = await linkAll(bridge, hellos);
    const listed = await callTool(bridge, 'list-computers');
    const { computers: entries, note } = listed.structuredContent;
    const whole = entries.filter((e) => e.peripherals.length > 0);
    const trimmed = entries.filter((e) => e.peripherals.length === 0);
    assert.ok(whole.length >= 2 && whole.length < 10, `${whole.length} whole`);
    assert.deepEqual(whole.map((e) => e.computerId), entries.slice(0, whole.length).map((e) => e.computerId), 'whole ones first, in id order');
    assert.ok(trimmed.length > 0 && entries.length < 50, `${trimmed.length} without lists, ${entries.length} listed`);
    const first = trimmed[0];
    const firstLink = bridge.links.get(first.computerId);
    assert.deepEqual(first.omitted, { peripherals: firstLink.identity.peripherals.length + firstLink.identity.omitted.peripherals, jobs: firstLink.identity.jobs.length + firstLink.identity.omitted.jobs });
    assert.ok(trimmed.at(-1).computerId >= 100, 'small computers past the first cut are listed without their lists too');
    assert.deepEqual(trimmed.at(-1).omitted, { peripherals: 1, jobs: 0 });
    const lastListed = entries.at(-1).computerId;
    assert.equal(
      note,
      `The answer reached MCP_LIST_COMPUTERS_MAX_CHARS (72000 characters): from computer ${first.computerId} on, ${trimmed.length} computers are listed without peripherals and jobs (list-peripherals reads one computer's); ${50 - entries.length} more computers are not listed (ids ${lastListed + 1} to 139).`,
    );
    const lines = listed.content[0].text.split('\n');
    assert.equal(lines.length, entries.length + 1);
    assert.equal(lines.at(-1), note);
    assert.match(lines[whole.length], new RegExp(`^${first.computerId} \\(Label: .*; peripherals and jobs left out of this answer \\(MCP_LIST_COMPUTERS_MAX_CHARS\\): \\d+ peripherals, \\d+ jobs; connected `));
    assert.ok(JSON.stringify(entries).length + JSON.stringify(listed.content[0].text).length <= 72000 + note.length * 2 + 256);
    const res = await fetch(`${base(bridge)}/computers`);
    const body = await res.json();
    assert.match(res.headers.get("cc-link-note"), /^The answer reached MCP_LIST_COMPUTERS_MAX_CHARS \(72000 characters\): .*more computers are not listed \(ids \d+ to 139\)\.$/);
    assert.ok(body.length > entries.length, 'GET /computers has no lines to pay for: more of them fit');
    assert.ok(JSON.stringify(body).length <= 72000 + 50 * 40);
    assert.ok(body.every((e) => typeof e.remoteAddress === 'string'));
    for (const c of computers) await c.close();
    await until(() => bridge.links.size === 0);
  }));

test('MCP_LIST_COMPUTERS_MAX_CHARS: an answer measured (its upper bound is over) that fits whole has no note', { timeout: 60_000 }, () =>
  withBridge({ MCP_LIST_COMPUTERS_MAX_CHARS: '65536', CC_MAX_IDENTITY_BYTES: '4096', LOG_LEVEL: 'error' }, async (bridge) => {
    // each listed in about 8,000 characters, each bounded at about 75,000 (6 a character, three times)
    const computers = await linkAll(bridge, [richHello(1, { size: 60_000 }), richHello(2, { size: 60_000 })]);
    const listed = await callTool(bridge, 'list-computers');
    assert.equal(listed.structuredContent.computers.length, 2);
    assert.ok(listed.structuredContent.computers.every((e) => e.peripherals.length > 0));
    assert.equal(listed.structuredContent.note, undefined);
    assert.equal(listed.content[0].text.split('\n').length, 2);
    const res = await fetch(`${base(bridge)}/computers`);
    assert.equal(res.headers.get('cc-link-note'), null);
    for (const c of computers) await c.close();
  }));

// Checking a pattern (pattern-safety.ts) takes about 1 us a character; a tools/list page of
// CC_UPSTREAM_MAX_MESSAGE_BYTES can hold a thousand 4,096-character patterns, checked in one turn of
// the event loop at every listing (3.5 s measured), which an upstream can ask for again at will with
// notifications/tools/list_changed. The listing's unrun-pattern warning checks a bounded amount of
// pattern text per page; the rest waits for the argument check of a call that needs it. A real HTTP
// upstream; no clock: the warnings said show how many patterns the listing checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { callTool, until, withBridge } from '../helpers.js';
import { jsonUpstream } from '../upstream/fixture.js';

const TOOLS = 100;
// a pattern the bridge does not run (nested repetition), 4,000 characters, a different one per tool
const unsafe = (i) => `^(a+)+${'b'.repeat(3990 - String(i).length)}${i}$`;

test('bug: a tools/list page full of long patterns was checked whole in one turn of the event loop (a 4 MB page: 3.5 s blocked, at every list_changed); now at most 16,384 characters of patterns a page are checked when listing, the rest when a call needs them', { timeout: 60_000 }, async (t) => {
  const tools = Array.from({ length: TOOLS }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: unsafe(i) } } } }));
  const url = await jsonUpstream(t, (msg) => ({
    result:
      msg.method === 'initialize' ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'patterns', version: '1' } }
      : msg.method === 'tools/list' ? { tools }
      : { content: [{ type: 'text', text: `called ${msg.params.name}` }] },
  }));
  await withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'pp', url }] }) }, async (bridge) => {
    await until(() => bridge.tools.list().some((tool) => tool.name === 'pp__t99'));
    const warned = bridge.logs.filter((l) => /upstream pp tool "t\d+": the bridge does not run the pattern/.test(l));
    // 16,384 characters: 4 patterns of 4,000 (before: all 100)
    assert.equal(warned.length, 4, bridge.logs.join('\n'));
    assert.ok(bridge.logs.some((l) => / info upstream pp listed more pattern text than the bridge checks when listing \(16384 characters a page\): 96 pattern\(s\) not checked now;/.test(l)), bridge.logs.join('\n'));
    // a pattern left unchecked at listing is checked by the call that needs it: not run, the value passed on
    const called = await callTool(bridge, 'pp__t99', { s: `${'a'.repeat(30)}!` });
    assert.equal(called.isError, undefined, JSON.stringify(called));
    assert.equal(called.content[0].text, 'called t99');
  });
});

test('bug: one call naming many upstream patterns not checked yet checked them all in its turn (a thousand 4,000-character patterns: up to 40 s blocked); now at most 16,384 characters of them a turn, the rest passed on that time and checked by a later call', { timeout: 60_000 }, async (t) => {
  // 10 patterns of 4,000 characters, each taking "x" and refusing "v"; the listing checks the first 4
  const pattern = (i) => `^(?:x|${'y'.repeat(3990 - String(i).length)}${i})$`;
  const properties = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, { type: 'string', pattern: pattern(i) }]));
  const tools = [{ name: 'many', inputSchema: { type: 'object', properties } }];
  const url = await jsonUpstream(t, (msg) => ({
    result:
      msg.method === 'initialize' ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'patterns', version: '1' } }
      : msg.method === 'tools/list' ? { tools }
      : { content: [{ type: 'text', text: 'called' }] },
  }));
  await withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'pq', url }] }) }, async (bridge) => {
    await until(() => bridge.tools.list().some((tool) => tool.name === 'pq__many'));
    const args = { ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`p${i}`, 'x'])), p9: 'v' };
    // first call: p4..p7 checked in its turn (16,384 characters), p8 and p9 not: passed on, the upstream checks them
    assert.equal((await callTool(bridge, 'pq__many', args)).content[0].text, 'called');
    // a later call checks them: p9 refuses "v"
    const second = await callTool(bridge, 'pq__many', args);
    assert.equal(second.isError, true, JSON.stringify(second));
    assert.match(second.content[0].text, /argument "p9" must match the pattern/);
  });
});

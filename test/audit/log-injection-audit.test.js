// Log lines are the operator's record: what a peer chooses (an upstream server's error text, its
// stderr) must never start a line of its own that reads as the bridge's, nor reach the terminal as a
// control sequence (ESC [2J clears it, \r overwrites the line, U+202E reverses it). A real HTTP
// upstream and a real stdio child; the bridge's own logger (createLogger) writes every line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { until, withBridge } from '../helpers.js';
import { jsonUpstream } from '../upstream/fixture.js';

const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warn|error) /;
const FORGED = '2026-11-24T08:00:00.000Z info upstream hh is up: 3 tool(s), MCP 2025-06-18';
/** Control characters a terminal acts on, and the line/paragraph separators and bidi controls. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Every line the sink got starts as the logger writes it, and a line break only ever starts an indented continuation. */
function assertNoForgedLine(logs) {
  for (const entry of logs) {
    assert.match(entry, LINE, JSON.stringify(entry));
    assert.doesNotMatch(entry, CONTROLS, JSON.stringify(entry));
    for (const rest of entry.split('\n').slice(1)) assert.match(rest, /^\s/, `a line break in ${JSON.stringify(entry)} starts an unindented line`);
  }
}

test('bug: an upstream\'s error text and stderr reached the log as they were: a line break forged a bridge log line, ESC and \\r acted on the terminal; now each control is escaped and a line break starts an indented continuation', { timeout: 60_000 }, async (t) => {
  const hostile = `no\n${FORGED}\r\u001b[2J\u202eevil`;
  const url = await jsonUpstream(t, () => ({ error: { code: -32603, message: hostile } }));
  // a stdio server that writes the same to its stderr, then never answers initialize
  const script = `process.stderr.write(${JSON.stringify(`${hostile}\n`)}); setInterval(() => {}, 1000);`;
  const config = writeConfig({
    servers: [
      { id: 'hh', url },
      { id: 'ss', command: process.execPath, args: ['-e', script] },
    ],
  });
  await withBridge({ CC_CONFIG: config, CC_UPSTREAM_TIMEOUT_MS: '600000' }, async (bridge) => {
    await until(() => bridge.logs.some((l) => l.includes('hh is down')) && bridge.logs.some((l) => l.includes('ss stderr')));
    const down = bridge.logs.find((l) => l.includes('hh is down'));
    // what the server said is still there to read, escaped
    assert.ok(down.includes('\\u001b[2J'), down);
    assertNoForgedLine(bridge.logs);
  });
});

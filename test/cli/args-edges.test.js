// cc-mcp's pure parts at edges no other test reached (found by mutation testing): argument parsing,
// key=value typing, the pins text and terminal escaping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_URL, UsageError, pairsToArgs, parseArgs } from '../../dist/cli/args.js';
import { renderHealth, renderPins, terminalText } from '../../dist/cli/render.js';

const refused = (argv, message, env = {}) =>
  assert.throws(() => parseArgs(argv, env), (e) => e instanceof UsageError && message.test(e.message), argv.join(' '));

test('parseArgs: https URLs, an empty CC_MCP_URL or --url=, -e outside exec, pin-reset and --allow-old-key, exec targets, values across lines', () => {
  assert.equal(parseArgs(['--url', 'https://bridge.example:8443/mcp', 'tools'], {}).url, 'https://bridge.example:8443/mcp');
  assert.equal(parseArgs(['tools'], { CC_MCP_URL: '' }).url, DEFAULT_URL, 'an empty CC_MCP_URL is unset');
  refused(['--url=', 'tools'], /^--url needs a value$/);
  refused(['tools', '-e', 'x'], /^unknown option -e$/);
  assert.deepEqual(parseArgs(['pin-reset', '7'], {}).command, { kind: 'pin-reset', computerId: 7, allowOldKey: false });
  assert.deepEqual(parseArgs(['pin-reset', '--allow-old-key', '7'], {}).command, { kind: 'pin-reset', computerId: 7, allowOldKey: true });
  refused(['pin-reset', '7', '8'], /^pin-reset needs one computer id/);
  refused(['pin-reset'], /^pin-reset needs one computer id/);
  refused(['pins', '--allow-old-key'], /^--allow-old-key is an option of pin-reset only$/);
  assert.deepEqual(parseArgs(['exec', '12', '-'], {}).command.target, { computerId: 12 });
  assert.deepEqual(parseArgs(['exec', 'base1', '-'], {}).command.target, { computer: 'base1' }, 'a label with digits is a label');
  assert.deepEqual(parseArgs(['exec', '7x', '-'], {}).command.target, { computer: '7x' });
  assert.deepEqual(parseArgs(['call', 't', 'code=print(1)\nprint(2)'], {}).command.args, { pairs: [{ key: 'code', raw: false, value: 'print(1)\nprint(2)' }] });
  assert.deepEqual(parseArgs(['call', 't', '  {"a": 1}'], {}).command.args, { json: { a: 1 } }, 'JSON after spaces');
  refused(['call', 't', '[1]'], /^expected key=value or key:=JSON/);
});

test('pairsToArgs: a one-type list ["string"] is a string schema', () => {
  const pairs = [{ key: 's', value: '12', raw: false }];
  assert.deepEqual(pairsToArgs(pairs, { s: { type: ['string'] } }), { s: '12' });
  assert.deepEqual(pairsToArgs(pairs, { s: { type: ['integer'] } }), { s: 12 });
});

test('renderPins: a reset\'s message, no pins, strict mode, and distrusted keys only when there are some', () => {
  assert.equal(renderPins({ ok: true, message: 'computer 3 may link again' }), 'computer 3 may link again');
  assert.equal(renderPins({ ok: true, pinned: [] }), 'no computer id is pinned');
  assert.equal(renderPins({ ok: true, pinned: [], strict: true }), 'no computer id is pinned (CC_LINK_PIN=strict: only these link)');
  assert.equal(renderPins({ ok: true, pinned: [1, 4], strict: false, distrusted: [] }), '2 computer ids pinned: 1 4');
  assert.equal(renderPins({ ok: true, pinned: [1], strict: true, distrusted: [9, 12] }), '1 computer id pinned (CC_LINK_PIN=strict: only these link): 1; a reset distrusts the old key of: 9 12');
});

test('renderHealth names why no computer can link only while the link port waits', () => {
  assert.equal(renderHealth({ ok: true, computers: 1, link: { state: 'listening', reason: 'stale' } }), 'bridge is up; 1 computer linked');
});

test('terminalText escapes a lone carriage return and other controls, and keeps tabs, line feeds and CRLF', () => {
  assert.equal(terminalText('a\rb\r\nc\td\u001b[2Je\u009bf\u007f'), 'a\\u000db\r\nc\td\\u001b[2Je\\u009bf\\u007f');
});

test('bug: a bad CC_MCP_URL was reported as "--url must be an http(s) URL ...", an option the user never gave; the error names where the URL came from', () => {
  assert.throws(() => parseArgs(['probe'], { CC_MCP_URL: '127.0.0.1:3000' }), { message: 'CC_MCP_URL must be an http(s) URL such as http://127.0.0.1:3000/mcp, got "127.0.0.1:3000"' });
  assert.throws(() => parseArgs(['--url', 'localhost:3000', 'probe'], { CC_MCP_URL: 'http://127.0.0.1:3000/mcp' }), { message: '--url must be an http(s) URL such as http://127.0.0.1:3000/mcp, got "localhost:3000"' });
  // a good --url wins over a bad CC_MCP_URL
  assert.equal(parseArgs(['--url', 'http://h:1/mcp', 'probe'], { CC_MCP_URL: 'nope' }).url, 'http://h:1/mcp');
});

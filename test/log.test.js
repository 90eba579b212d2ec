// The line logger: level filtering, line format, and stderr as the default sink.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../dist/log.js';

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (debug|info|warn|error) (.*)$/;

function collect(level) {
  const lines = [];
  const log = createLogger(level, (line) => lines.push(line));
  for (const at of ['debug', 'info', 'warn', 'error']) log[at](`${at} message`);
  return lines.map((line) => {
    const m = LINE.exec(line);
    assert.ok(m, `malformed line ${JSON.stringify(line)}`);
    assert.ok(!Number.isNaN(Date.parse(m[1])));
    assert.equal(m[3], `${m[2]} message`);
    return m[2];
  });
}

test('each level lets through itself and everything more severe', () => {
  assert.deepEqual(collect('debug'), ['debug', 'info', 'warn', 'error']);
  assert.deepEqual(collect('info'), ['info', 'warn', 'error']);
  assert.deepEqual(collect('warn'), ['warn', 'error']);
  assert.deepEqual(collect('error'), ['error']);
  assert.deepEqual(collect('silent'), []);
});

test('the default sink writes one line per message to stderr, never stdout', (t) => {
  const err = [];
  const out = [];
  t.mock.method(process.stderr, 'write', (chunk) => (err.push(String(chunk)), true));
  t.mock.method(process.stdout, 'write', (chunk) => (out.push(String(chunk)), true));
  const log = createLogger('info');
  log.debug('hidden');
  log.warn('careful');
  t.mock.restoreAll();
  assert.equal(out.length, 0);
  assert.equal(err.length, 1);
  assert.match(err[0], /^\S+ warn careful\n$/);
});

test('a message is one entry: controls escaped, a line break starts an indented continuation, tabs and other scripts kept', () => {
  const lines = [];
  const log = createLogger('info', (line) => lines.push(line));
  log.warn('a\tb é 中\nc\r\u001b[31m\u0085\u2028\u202ed');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^\S+ warn a\tb é 中\n {4}c\\u000d\\u001b\[31m\\u0085\\u2028\\u202ed$/);
  log.info('plain');
  assert.match(lines[1], /^\S+ info plain$/);
});

test('exactly the unsafe characters are escaped: each code point of the BMP checked against the list (found by mutation testing: each edge of the set but two could move unseen)', () => {
  // the list, written out here as the log's contract: C0 but the tab, DEL and C1, U+061C, U+200E-U+200F,
  // U+2028-U+202E, U+2066-U+2069 (a line break is the one kept, as an indented continuation)
  const unsafe = (c) => (c <= 0x1f && c !== 0x09) || (c >= 0x7f && c <= 0x9f) || c === 0x061c || c === 0x200e || c === 0x200f || (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
  let line = '';
  const log = createLogger('info', (l) => (line = l.slice(l.indexOf(' info ') + 6)));
  const wrong = [];
  for (let c = 0; c <= 0xffff; c++) {
    const ch = String.fromCharCode(c);
    log.info(`a${ch}b`);
    const expected = c === 0x0a ? 'a\n    b' : unsafe(c) ? `a\\u${c.toString(16).padStart(4, '0')}b` : `a${ch}b`;
    if (line !== expected) wrong.push(`U+${c.toString(16).padStart(4, '0')}: ${JSON.stringify(line)}`);
  }
  assert.deepEqual(wrong, []);
});

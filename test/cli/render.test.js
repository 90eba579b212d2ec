// cc-mcp's pure parts: argument typing and how results, tool lists and health read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_URL, pairsToArgs, parseArgs } from '../../dist/cli/args.js';
import { renderHealth, renderResult, renderTools } from '../../dist/cli/render.js';

test('content blocks: text as is, other kinds named; structuredContent when there is no content', () => {
  const result = {
    content: [
      { type: 'text', text: 'line' },
      { type: 'text' },
      { type: 'image', mimeType: 'image/png', data: 'AAAA' },
      { type: 'audio', data: 7 },
      { type: 'resource_link', uri: 'file:///a' },
      { type: 'resource', resource: { uri: 'file:///b', text: 'inline' } },
      { type: 'resource', resource: { uri: 'file:///c', blob: 'AA' } },
      { type: 'resource' },
      { type: 'widget' },
      'odd',
    ],
  };
  assert.equal(
    renderResult(result),
    ['line', '', '[image image/png, about 3 bytes]', '[audio unknown type, about 0 bytes]', '[resource file:///a]', 'inline', '[resource file:///c]', '[resource undefined]', '[widget content]', '["odd"]'].join('\n'),
  );
  assert.equal(renderResult({ content: [], structuredContent: { a: 1 } }), '{\n  "a": 1\n}');
  assert.equal(renderResult({}), '');
});

test('tool list: names padded, title or the first sentence of the description', () => {
  assert.equal(
    renderTools([
      { name: 'a', title: 'Alpha' },
      { name: 'longer', description: 'Does things. More detail.' },
      { name: 'bare' },
    ]),
    'a       Alpha\nlonger  Does things\nbare',
  );
  assert.equal(renderTools([]), '');
  assert.equal(renderHealth({ ok: true }), 'bridge is up (it says more with a valid token: set CC_MCP_TOKEN to one of its MCP_AUTH_TOKEN tokens)');
  assert.equal(renderHealth({ ok: true, computers: 2 }), 'bridge is up; 2 computers linked');
  assert.equal(renderHealth({ ok: true, computers: 0, link: { state: 'listening', address: '127.0.0.1:3001' } }), 'bridge is up; 0 computers linked');
  assert.equal(
    renderHealth({ ok: true, computers: 0, link: { state: 'waiting', address: '127.0.0.1:3001', reason: 'the link port 127.0.0.1:3001 is in use' } }),
    'bridge is up; 0 computers linked; no computer can link: the link port 127.0.0.1:3001 is in use',
  );
});

test('bug: cc-mcp health said nothing of CC_CONFIG upstream servers, so one down since the start showed only in the bridge log; now how many are up and why each other one is not', () => {
  const servers = [
    { id: 'files', transport: 'stdio', state: 'up', tools: 3, restarts: 0 },
    { id: 'nether', transport: 'http', state: 'down', tools: 0, restarts: 4, reason: 'initialize did not get through: HTTP 404' },
    { id: 'maps', transport: 'stdio', state: 'starting', tools: 0, restarts: 0 },
  ];
  assert.equal(
    renderHealth({ ok: true, computers: 1, servers }),
    'bridge is up; 1 computer linked; upstream servers: 1 of 3 up, nether down (initialize did not get through: HTTP 404), maps starting',
  );
  assert.equal(renderHealth({ ok: true, computers: 0, servers: [servers[0]] }), 'bridge is up; 0 computers linked; upstream servers: 1 of 1 up');
  assert.equal(renderHealth({ ok: true, computers: 0, servers: [] }), 'bridge is up; 0 computers linked', 'no CC_CONFIG servers: nothing said');
  // a reason an upstream chose reaches the terminal escaped, on one line
  assert.equal(
    renderHealth({ ok: true, computers: 0, servers: [{ id: 'x', state: 'down', reason: 'bad\u001b[2J\nline' }] }),
    'bridge is up; 0 computers linked; upstream servers: 0 of 1 up, x down (bad\\u001b[2J\\u000aline)',
  );
});

test('options anywhere, -- ends them, CC_MCP_URL then the default URL', () => {
  assert.deepEqual(parseArgs(['tools'], {}), { url: DEFAULT_URL, json: false, command: { kind: 'tools' } });
  assert.equal(parseArgs(['tools'], { CC_MCP_URL: 'http://h:1/mcp' }).url, 'http://h:1/mcp');
  assert.equal(parseArgs(['--url=http://x:2/mcp', 'tools'], { CC_MCP_URL: 'http://h:1/mcp' }).url, 'http://x:2/mcp');
  assert.deepEqual(parseArgs(['call', 't', '--', '--json=x'], {}).command, { kind: 'call', tool: 't', args: { pairs: [{ key: '--json', raw: false, value: 'x' }] } });
  assert.deepEqual(parseArgs(['exec', 'base', '-e', 'x', '--json'], {}), {
    url: DEFAULT_URL,
    json: true,
    command: { kind: 'exec', target: { computer: 'base' }, source: { code: 'x' } },
  });
  assert.deepEqual(parseArgs(['-h', 'nonsense'], {}).command, { kind: 'help' });
});

test('key=value: strings where the schema says string, JSON where it parses, else the text', () => {
  const pairs = [
    { key: 's', value: '12', raw: false },
    { key: 'n', value: '12', raw: false },
    { key: 'free', value: 'hello', raw: false },
    { key: 'either', value: 'true', raw: false },
    { key: 'j', value: '[1,2]', raw: true },
  ];
  const properties = { s: { type: 'string' }, n: { type: 'integer' }, either: { type: ['string', 'boolean'] } };
  assert.deepEqual(pairsToArgs(pairs, properties), { s: '12', n: 12, free: 'hello', either: true, j: [1, 2] });
});

test('bug: cc-mcp printed an upstream tool\'s title, name and a content block\'s type, MIME type or URI raw, so ESC [2J in one cleared the operator\'s terminal and a line break made up a tool; now they are shown with control characters escaped (a tool\'s text stays as sent)', () => {
  const tools = renderTools([
    { name: 'fx__a', title: 'clear\u001b[2J\nfx__evil  looks real' },
    { name: 'fx__b\u001b]0;x\u0007', description: 'ok. more' },
  ]);
  assert.equal(tools, `fx__a${' '.repeat(18)}clear\\u001b[2J\\u000afx__evil  looks real\nfx__b\\u001b]0;x\\u0007  ok`);
  const result = renderResult({
    content: [
      { type: 'image', mimeType: 'image/png\u001b[31m', data: 'AAAA' },
      { type: 'resource_link', uri: 'file:///a\r\u202e' },
      { type: 'x\u001b[2J' },
      { type: 'text', text: 'output\u001b[1m as sent' },
    ],
  });
  assert.equal(result, '[image image/png\\u001b[31m, about 3 bytes]\n[resource file:///a\\u000d\\u202e]\n[x\\u001b[2J content]\noutput\u001b[1m as sent');
});

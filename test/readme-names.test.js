// Names a user relies on, README against the code: JSON-RPC error codes, WebSocket close codes and
// hello-error codes on the link port, /metrics names and label values, HTTP routes with their methods
// and statuses, REST error codes, the client's error codes, the error classes' codes, and cc-mcp's
// commands and options. Each is read from the code (its source text, or the built module where the
// code keeps them as data), so a name added, renamed or removed on one side only fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { STATUS_BY_FAILURE, restRoutes } from '../dist/surfaces/rest.js';
import { pinsRoutes } from '../dist/surfaces/pins-route.js';
import { reloadRoute } from '../dist/surfaces/reload-route.js';
import { USAGE } from '../dist/cli/args.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const src = new URL('../src/', import.meta.url);

/** Every .ts file under src/, as { path, text }. */
const sources = readdirSync(src, { recursive: true })
  .filter((p) => p.endsWith('.ts'))
  .map((p) => ({ path: p, text: readFileSync(new URL(p, src), 'utf8') }));
const source = (path) => {
  const file = sources.find((f) => f.path === path);
  assert.ok(file, `src/${path} is gone: update this test`);
  return file.text;
};
const all = (re, text) => [...text.matchAll(re)].map((m) => m[1]);
const sorted = (values) => [...new Set(values)].sort();

/** The README's text from the line `heading` to the next heading of its level or higher (outside code blocks). */
function section(heading) {
  const lines = readme.split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start !== -1, `README has no heading ${heading}`);
  const level = heading.indexOf(' ');
  let fence = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    if (/^```/.test(lines[end])) fence = !fence;
    const m = fence ? null : /^(#+) /.exec(lines[end]);
    if (m && m[1].length <= level) break;
  }
  return lines.slice(start + 1, end).join('\n');
}

/** The rows of the markdown table that follows `intro` (a line of text just before it), as arrays of cells. */
function tableAfter(text, intro) {
  const at = text.indexOf(intro);
  assert.ok(at !== -1, `README has no "${intro}"`);
  const lines = text.slice(at).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, -1).split(' | ').map((c) => c.trim()));
  }
  assert.ok(rows.length > 0, `no table after "${intro}"`);
  return rows;
}

test('JSON-RPC error codes: the README table lists exactly the codes the bridge defines, and no other code is named', () => {
  const codes = sorted(sources.flatMap((f) => all(/^export const [A-Z_]+ = (-32\d{3});/gm, f.text)));
  assert.ok(codes.length >= 8, `only ${codes.length} JSON-RPC codes found in src/`);
  const rows = tableAfter(readme, 'Every JSON-RPC error code the bridge answers with');
  assert.deepEqual(sorted(rows.map((r) => r[0].replace(/`/g, ''))), codes);
  // elsewhere a code may be named only if the bridge has it; "`-32000` to `-32019`" names a range
  const named = all(/(-32\d{3})/g, readme.replace(/`-32\d{3}` to `-32\d{3}`/g, ''));
  for (const code of named) assert.ok(codes.includes(code), `README names JSON-RPC error ${code}, which the bridge never sends`);
});

test('link close codes: the Link protocol table lists exactly the codes the bridge closes with, and each hello-error code', () => {
  const link = sources.filter((f) => f.path.startsWith('link/'));
  const codes = link.flatMap((f) => [...all(/const CLOSE_[A-Z_]+ = (\d{4});/g, f.text), ...all(/\.close\((\d{4})\b/g, f.text)]);
  // ws closes a socket with 1009 itself when a frame is over maxPayload (CC_MAX_FRAME_BYTES)
  if (/maxPayload: options\.maxFrameBytes/.test(source('link/server.ts'))) codes.push('1009');
  const rows = tableAfter(section('## Link protocol'), 'Every WebSocket close code the bridge ends a link with');
  assert.deepEqual(sorted(rows.map((r) => r[0].replace(/`/g, ''))), sorted(codes));
  const helloCodes = all(/'([a-z_]+)'/g, /export type HelloErrorCode = ([^;]+);/.exec(source('link/frames.ts'))[1]);
  assert.ok(helloCodes.length >= 5);
  for (const code of helloCodes) assert.ok(rows.some((r) => r[2].includes(`\`hello-error\` \`${code}\``)), `the close table does not say which close hello-error ${code} gets`);
  // close codes named anywhere in the README are ones the bridge uses
  for (const code of all(/\bclose(?:d with| code)? (\d{4})\b/g, readme)) assert.ok(codes.includes(code), `README names close ${code}`);
});

test('metrics: every metric the bridge renders is in the Metrics section, every one named there exists, and each label value is listed', () => {
  const names = sorted(
    sources.flatMap((f) => [...all(/\bname: '(cc_[a-z0-9_]+)'/g, f.text), ...all(/\bmetric\(\s*'(cc_[a-z0-9_]+)'/g, f.text), ...all(/# HELP (cc_[a-z0-9_]+) /g, f.text)]),
  );
  assert.ok(names.length >= 40, `only ${names.length} metric names found in src/`);
  const text = section('### Metrics');
  for (const name of names) assert.ok(new RegExp(`\`${name}[\` {]`).test(text), `the Metrics section does not name ${name}`);
  for (const name of all(/`(cc_[a-z0-9_]+)/g, text)) assert.ok(names.includes(name), `the Metrics section names ${name}, which the bridge does not render`);
  const reasons = sorted(sources.flatMap((f) => [...all(/(?:linksRefused|framesRejected)\.inc\('([a-z_]+)'\)/g, f.text), ...all(/\brefusal\('([a-z_]+)'/g, f.text)]));
  assert.ok(reasons.length >= 15, `only ${reasons.length} reasons found`);
  for (const reason of reasons) assert.ok(new RegExp(`\\b${reason}\\b`).test(text), `the Metrics section does not list the reason ${reason}`);
});

test('REST: the error table has exactly the (status, code) pairs the REST routes send, and every failure code', () => {
  const rest = source('surfaces/rest.ts');
  const pairs = all(/sendError\(res, (\d{3}, '[a-z_]+')/g, rest).map((p) => p.replace(", '", ' ').replace("'", ''));
  for (const [code, status] of Object.entries(STATUS_BY_FAILURE)) if (code !== 'tool_error') pairs.push(`${status} ${code}`);
  const rows = tableAfter(section('## Plain HTTP: REST routes and OpenAPI'), '`{"error": {"code": "<stable code>", "message": "..."}}`');
  const documented = rows.filter((r) => /^\d{3}$/.test(r[0]) && /^`[a-z_]+`$/.test(r[1])).map((r) => `${r[0]} ${r[1].replace(/`/g, '')}`);
  assert.deepEqual(sorted(documented), sorted(pairs));
  // tool_error is no error status: the call answers 200 with isError
  assert.equal(STATUS_BY_FAILURE.tool_error, 200);
  assert.ok(rows.some((r) => r[0] === '200 with `"isError": true`'));
});

test('routes: every path and method the MCP listener serves is in the README routes table, with the statuses its handlers send', () => {
  const rows = tableAfter(section('## Plain HTTP: REST routes and OpenAPI'), '**Every route on the MCP listener**');
  const row = (path) => {
    const found = rows.find((r) => r[0].split(/ \(and |, /).map((c) => c.replace(/[`()]/g, '')).includes(path));
    assert.ok(found, `the routes table has no row for ${path}`);
    return found;
  };
  // as README writes a prefix route: /tools/* is /tools/<name>, /pins/* is /pins/<id>/reset
  const shown = (path) => ({ '/tools/*': '/tools/<name>', '/pins/*': '/pins/<id>/reset' })[path] ?? path;
  const routes = { ...restRoutes({}), ...pinsRoutes({}), '/reload': reloadRoute(null) };
  const routesTs = source('surfaces/routes.ts');
  for (const path of all(/\.add\('(\/[^']*)'/g, routesTs)) routes[path] ??= {};
  assert.deepEqual(sorted(Object.keys(routes)), sorted(['/', '/mcp', '/metrics', '/health', '/reload', '/openapi.json', '/tools', '/tools/*', '/computers', '/pins', '/pins/*']), 'a route was added or removed: add it to this list and to the README');
  for (const [path, methods] of Object.entries(routes)) {
    const r = row(shown(path));
    for (const method of Object.keys(methods).filter((m) => m !== '*')) assert.ok(r[1].includes(`\`${method}\``), `${path}: the routes table does not list ${method}`);
  }
  for (const path of ['/metrics', '/health', '/openapi.json']) {
    const block = new RegExp(`\\.add\\('${path.replace('.', '\\.')}', \\{\\s*(?://[^\\n]*\\s*)*(GET|POST):`).exec(routesTs);
    assert.ok(block && row(path)[1].includes(`\`${block[1]}\``), `${path}: its method in src/surfaces/routes.ts is not in the table`);
  }
  assert.match(routesTs, /mcp\.GET = /);
  assert.ok(row('/mcp')[1].includes('`GET`') && row('/mcp')[1].includes('`POST`'));
  // the statuses each of these files sends are in its rows, and its rows name no other status
  const statuses = (text) => sorted([...all(/send(?:Json|Error)\(res, (\d{3})/g, text), ...all(/\? (\d{3}) : \d{3}/g, text), ...all(/\? \d{3} : (\d{3})/g, text)]);
  const said = (...paths) => sorted(paths.flatMap((p) => all(/`(\d{3})`/g, row(p)[2])));
  assert.deepEqual(said('/pins', '/pins/<id>/reset'), statuses(source('surfaces/pins-route.ts')));
  assert.deepEqual(said('/reload'), statuses(source('surfaces/reload-route.ts')));
  const toolStatuses = sorted([...all(/sendError\(res, (\d{3})/g, source('surfaces/rest.ts')), ...Object.values(STATUS_BY_FAILURE).map(String)]);
  assert.deepEqual(said('/tools/<name>'), toolStatuses);
});

test('client errors: every RpcClientError code is named in the README', () => {
  const codes = all(/'(ERR_RPC_[A-Z]+)'/g, /export type RpcClientErrorCode = ([^;]+);/.exec(source('jsonrpc/client-request.ts'))[1]);
  assert.ok(codes.length >= 6);
  for (const code of codes) assert.ok(readme.includes(`\`${code}\``), `README does not name ${code}`);
});

/**
 * Error codes (`readonly code = 'ERR_...'`) no user ever sees: each error is caught by its class (or
 * its code) and said as a message, an exit status, an HTTP status or a failure code, never by this
 * code. Checked by hand (a bad value, CC_CONFIG file, pins file, session key file: exit 2 with a
 * message; a bad cc-mcp argument: exit 2 with a message). One made visible goes to the README instead.
 */
const UNSHOWN_CODES = {
  ERR_CONFIG: 'index.ts: "invalid configuration: ...", exit 2',
  ERR_CONFIG_FILE: 'index.ts: "invalid configuration file: ...", exit 2; POST /reload 422 and SIGHUP log the problems',
  ERR_PINS_FILE: 'index.ts: "invalid pins file: ...", exit 2',
  ERR_SESSION_KEY_FILE: 'index.ts: "invalid session key file: ...", exit 2',
  ERR_USAGE: 'cli/run.ts: "cc-mcp: ... (cc-mcp --help shows the usage)", exit 2',
  ERR_UPSTREAM_HTTP: 'an upstream answer "HTTP <status>: ..." fails the call as ERR_RPC_SEND (unavailable)',
  ERR_TOOL_NAME_COLLISION: 'config/hub.ts: a problem of the file ($.tools[i].name), or a log line for an upstream',
  ERR_ENDPOINT_CONFIG: 'config/hub.ts checks endpoints first: a problem of the file ($.endpoints[i])',
  ERR_FRAME_TOO_LARGE: 'tools: failure code invalid_arguments, "The request is too large to send: ..."',
  ERR_BODY_TOO_LARGE: 'surfaces: HTTP 413 (REST code body_too_large; /mcp -32600 "Request body exceeds N bytes")',
};

test('error codes: every error class\'s code is named in the README, or listed here as never shown to a user', () => {
  const codes = sorted(sources.flatMap((f) => all(/readonly code = '(ERR_[A-Z_]+)'/g, f.text)));
  assert.ok(codes.length >= 10, `only ${codes.length} error codes found in src/`);
  for (const code of codes) {
    const named = readme.includes(`\`${code}\``);
    assert.ok(named || code in UNSHOWN_CODES, `${code} is neither named in the README nor listed in UNSHOWN_CODES (is it shown to a user?)`);
    assert.ok(!(named && code in UNSHOWN_CODES), `${code} is named in the README but listed in UNSHOWN_CODES`);
  }
  for (const code of Object.keys(UNSHOWN_CODES)) assert.ok(codes.includes(code), `UNSHOWN_CODES lists ${code}, which no error class has`);
});

test('cc-mcp: every command and option of its usage is in the README, and the README names no other', () => {
  const text = section('## Operator CLI: `cc-mcp`');
  const commands = all(/^ {2}([a-z][a-z-]*)/gm, USAGE.slice(USAGE.indexOf('Commands:'), USAGE.indexOf('Options:')));
  assert.deepEqual(sorted(commands), ['call', 'exec', 'health', 'pin-reset', 'pins', 'probe', 'tools']);
  for (const command of commands) assert.match(text, new RegExp(`^cc-mcp ${command}\\b`, 'm'), `the cc-mcp section has no example of ${command}`);
  const options = sorted(all(/(?<![\w-])(--?[a-z][a-z-]*)/g, USAGE.replace(/^Usage: /, '')).filter((o) => !/^-[a-z]{2,}/.test(o)));
  assert.deepEqual(options, ['--allow-old-key', '--help', '--json', '--url', '--version', '-e', '-h']);
  for (const option of options) assert.ok(text.includes(`\`${option}`), `the cc-mcp section does not explain ${option}`);
  for (const variable of all(/\b(CC_MCP_[A-Z]+)/g, USAGE)) assert.ok(text.includes(`\`${variable}\``), `the cc-mcp section does not explain ${variable}`);
  // every `cc-mcp <command>` the README shows is one cc-mcp has
  for (const used of all(/`cc-mcp ([a-z][a-z-]*)/g, readme)) assert.ok(commands.includes(used), `README shows cc-mcp ${used}`);
  for (const used of all(/^cc-mcp (?:--[a-z]+ )*([a-z][a-z-]*)/gm, text)) assert.ok(commands.includes(used), `README shows cc-mcp ${used}`);
  for (const used of all(/`(--?[a-z][a-z-]*)/g, text)) assert.ok(options.includes(used), `the cc-mcp section names option ${used}, which cc-mcp does not have`);
});

test('the bridge: every command-line flag it takes is named in the README', () => {
  const flags = sorted(all(/argv\.includes\('(-[a-z-]+)'\)/g, source('index.ts')));
  assert.deepEqual(flags, ['--help', '--stdio', '--version', '-h']);
  for (const flag of flags) assert.ok(readme.includes(`\`${flag}\``), `README does not name the bridge's ${flag}`);
});

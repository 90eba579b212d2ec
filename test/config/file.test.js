// The CC_CONFIG file: a full valid file, then one test per problem, each naming file, JSON path and reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigFileError, loadFileConfig, parseFileConfig, parseFileConfigText } from '../../dist/config/file.js';
import { canonical, diffConfig } from '../../dist/config/diff.js';
import { key } from '../../dist/config/checks.js';

const FILE = '/etc/cc/bridge.json';

const turtle = {
  name: 'turtle-refuel',
  title: 'Refuel a turtle',
  description: 'Refuels miner-1',
  inputSchema: { type: 'object', properties: { count: { type: 'integer', minimum: 1 } } },
  target: { label: 'miner-1' },
  lua: 'local args = ...\nreturn turtle.refuel(args.count)',
  timeoutMs: 5000,
};

/** Asserts that `value` is rejected with exactly one problem at `jsonPath` whose message matches `reason`. */
function rejects(value, jsonPath, reason) {
  assert.throws(
    () => parseFileConfig(value, FILE),
    (err) => {
      assert.ok(err instanceof ConfigFileError, String(err));
      assert.equal(err.code, 'ERR_CONFIG_FILE');
      assert.equal(err.file, FILE);
      assert.equal(err.problems.length, 1, JSON.stringify(err.problems));
      assert.equal(err.problems[0].path, jsonPath);
      assert.match(err.problems[0].message, reason);
      assert.equal(err.message, `${FILE}: ${jsonPath}: ${err.problems[0].message}`);
      return true;
    },
  );
}

test('a full file parses, with defaults filled in', () => {
  const config = parseFileConfig(
    {
      tools: [turtle, { name: 'door', target: 'argument', lua: 'redstone.setOutput("left", true)' }, { name: 'n', target: { computerId: 3 }, lua: 'return 1', annotations: { readOnlyHint: true } }],
      servers: [
        { id: 'files', command: 'npx', args: ['-y', 'x'], env: { A: 'b' }, cwd: '/srv', timeoutMs: 1000 },
        { id: 'nether', url: 'http://10.0.0.5:3000/mcp', headers: { authorization: 'Bearer x' }, timeoutMs: 2000 },
        { id: 'bare', command: 'srv' },
        { id: 'h', url: 'https://example.com/mcp' },
      ],
      endpoints: [{ path: '/refuel', tool: 'turtle-refuel' }],
    },
    FILE,
  );
  assert.deepEqual(config.tools[0], turtle);
  assert.deepEqual(config.tools[1], {
    name: 'door',
    title: 'door',
    description: '',
    target: 'argument',
    lua: 'redstone.setOutput("left", true)',
    inputSchema: {
      type: 'object',
      properties: {
        computerId: { type: 'integer', minimum: 0, description: 'id of the target computer (os.getComputerID())' },
        computer: { type: 'string', minLength: 1, description: 'label of the target computer; must match exactly one linked computer' },
      },
    },
  });
  assert.deepEqual(config.tools[2].target, { computerId: 3 });
  assert.deepEqual(config.tools[2].annotations, { readOnlyHint: true });
  assert.deepEqual(config.servers, [
    { id: 'files', command: 'npx', args: ['-y', 'x'], env: { A: 'b' }, cwd: '/srv', timeoutMs: 1000 },
    { id: 'nether', url: 'http://10.0.0.5:3000/mcp', headers: { authorization: 'Bearer x' }, timeoutMs: 2000 },
    { id: 'bare', command: 'srv', args: [], env: {} },
    { id: 'h', url: 'https://example.com/mcp', headers: {} },
  ]);
  assert.deepEqual(config.endpoints, [{ path: '/refuel', tool: 'turtle-refuel' }]);
  assert.deepEqual(parseFileConfig({}, FILE), { tools: [], servers: [], endpoints: [] });
});

test('the top level must be an object without unknown keys', () => {
  rejects([], '$', /must be a JSON object, got an array/);
  rejects({ tool: [] }, '$.tool', /unknown key; expected one of "tools", "servers", "endpoints"/);
  rejects({ 'my key': 1 }, '$["my key"]', /unknown key/);
  rejects({ tools: {} }, '$.tools', /must be an array, got an object/);
  rejects({ servers: 'x' }, '$.servers', /must be an array, got a string/);
});

test('every problem is reported, not just the first', () => {
  assert.throws(
    () => parseFileConfig({ tools: [{ name: 'a.b', target: 'argument', lua: '' }], servers: [{ id: 'x' }], extra: 1 }, FILE),
    (err) => {
      assert.deepEqual(err.problems.map((p) => p.path), ['$.extra', '$.tools[0].name', '$.tools[0].lua', '$.servers[0]']);
      assert.equal(err.message.split('\n').length, 4);
      return true;
    },
  );
});

test('tool problems, one at a time', () => {
  const tool = (patch) => ({ tools: [{ ...turtle, ...patch }] });
  rejects({ tools: [1] }, '$.tools[0]', /must be an object, got a number/);
  rejects(tool({ nmae: 'x' }), '$.tools[0].nmae', /unknown key/);
  rejects(tool({ name: undefined }), '$.tools[0].name', /must be a string, got nothing/);
  rejects(tool({ name: 'a.b' }), '$.tools[0].name', /1-64 characters of A-Z a-z 0-9 _ -/);
  rejects(tool({ name: 'x'.repeat(65) }), '$.tools[0].name', /1-64 characters/);
  rejects(tool({ title: '' }), '$.tools[0].title', /must not be empty/);
  rejects(tool({ description: 3 }), '$.tools[0].description', /must be a string, got a number/);
  rejects(tool({ target: { computerId: -1 } }), '$.tools[0].target.computerId', /whole number >= 0/);
  rejects(tool({ target: { computerId: 1.5 } }), '$.tools[0].target.computerId', /whole number >= 0/);
  rejects(tool({ target: { label: '' } }), '$.tools[0].target.label', /must not be empty/);
  rejects(tool({ target: { label: 'a', computerId: 1 } }), '$.tools[0].target', /"argument"/);
  rejects(tool({ target: 'args' }), '$.tools[0].target', /\{"computerId": <number>\}, \{"label": "<label>"\} or "argument"/);
  rejects(tool({ target: undefined }), '$.tools[0].target', /"argument"/);
  rejects(tool({ lua: '   ' }), '$.tools[0].lua', /must not be empty/);
  rejects(tool({ lua: 'x'.repeat(64 * 1024 + 1) }), '$.tools[0].lua', /65537 bytes; at most 65536/);
  rejects(tool({ timeoutMs: 0 }), '$.tools[0].timeoutMs', /from 1 to 300000/);
  rejects(tool({ timeoutMs: 300001 }), '$.tools[0].timeoutMs', /from 1 to 300000/);
  rejects(tool({ annotations: [] }), '$.tools[0].annotations', /must be an object, got an array/);
  rejects(tool({ inputSchema: 'object' }), '$.tools[0].inputSchema', /JSON Schema object, got a string/);
  rejects(tool({ inputSchema: { type: 'array' } }), '$.tools[0].inputSchema.type', /"type": "object"/);
  rejects(tool({ inputSchema: { type: 'object', properties: [] } }), '$.tools[0].inputSchema.properties', /must be an object, got an array/);
  rejects(tool({ inputSchema: { type: 'object', required: 'a' } }), '$.tools[0].inputSchema.required', /array of property names/);
  rejects(
    tool({ target: 'argument', inputSchema: { type: 'object', properties: { computer: { type: 'string' } } } }),
    '$.tools[0].inputSchema.properties.computer',
    /added for target "argument"/,
  );
});

test('tool names: duplicates and server prefixes', () => {
  rejects({ tools: [turtle, { ...turtle }] }, '$.tools[1].name', /tool name "turtle-refuel" is already used at \$\.tools\[0\]\.name/);
  rejects({ tools: [{ ...turtle, name: 'files__read' }], servers: [{ id: 'files', command: 'x' }] }, '$.tools[0].name', /names the tools of server "files"/);
});

test('server problems, one at a time', () => {
  const stdio = (patch) => ({ servers: [{ id: 'files', command: 'npx', ...patch }] });
  const http = (patch) => ({ servers: [{ id: 'web', url: 'http://127.0.0.1:1/mcp', ...patch }] });
  rejects({ servers: [null] }, '$.servers[0]', /must be an object, got null/);
  rejects({ servers: [{ id: 'a' }] }, '$.servers[0]', /exactly one of "command".*or "url"/);
  rejects({ servers: [{ id: 'a', command: 'x', url: 'http://x' }] }, '$.servers[0]', /exactly one of/);
  for (const id of ['a__b', 'a_', '_a', 'a.b', '', 'x'.repeat(33)]) rejects(stdio({ id }), '$.servers[0].id', id === '' ? /must not be empty/ : /1-32 characters/);
  rejects(stdio({ id: 7 }), '$.servers[0].id', /must be a string, got a number/);
  rejects(stdio({ command: '' }), '$.servers[0].command', /must not be empty/);
  rejects(stdio({ args: 'x' }), '$.servers[0].args', /array of strings, got a string/);
  rejects(stdio({ args: ['a', 2] }), '$.servers[0].args[1]', /must be a string, got a number/);
  rejects(stdio({ env: [] }), '$.servers[0].env', /object of strings, got an array/);
  rejects(stdio({ env: { PATH: 1 } }), '$.servers[0].env.PATH', /must be a string/);
  rejects(stdio({ cwd: 1 }), '$.servers[0].cwd', /must be a string/);
  rejects(stdio({ url2: 1 }), '$.servers[0].url2', /unknown key; expected one of "id", "command", "args", "env", "cwd", "timeoutMs"/);
  rejects(stdio({ timeoutMs: 'x' }), '$.servers[0].timeoutMs', /milliseconds/);
  rejects(http({ url: 'ftp://x' }), '$.servers[0].url', /http:\/\/ or https:\/\//);
  rejects(http({ url: 'not a url' }), '$.servers[0].url', /http:\/\/ or https:\/\//);
  rejects(http({ headers: { 'x-a': null } }), '$.servers[0].headers["x-a"]', /must be a string, got null/);
  rejects(http({ args: [] }), '$.servers[0].args', /unknown key; expected one of "id", "url", "headers", "timeoutMs"/);
  rejects({ servers: [{ id: 'a', command: 'x' }, { id: 'a', url: 'http://x' }] }, '$.servers[1].id', /server id "a" is already used at \$\.servers\[0\]\.id/);
});

test('endpoint shape', () => {
  rejects({ endpoints: [[]] }, '$.endpoints[0]', /must be an object, got an array/);
  rejects({ endpoints: [{ path: 'x', tool: 'a' }] }, '$.endpoints[0].path', /must start with "\/"/);
  rejects({ endpoints: [{ path: '/x' }] }, '$.endpoints[0].tool', /must be a string/);
  rejects({ endpoints: [{ path: '/x', tool: 'a', method: 'GET' }] }, '$.endpoints[0].method', /unknown key/);
});

test('JSON syntax errors and unreadable files name the file', () => {
  assert.throws(() => parseFileConfigText('{\n  "tools": [1\n', FILE), (err) => {
    assert.equal(err.problems[0].path, '$');
    assert.match(err.message, /^\/etc\/cc\/bridge\.json: \$: not valid JSON: .*\(line 3, column 1\)$/);
    return true;
  });
  assert.throws(() => parseFileConfigText('{\n  "tools": [,]\n}', FILE), (err) => {
    assert.match(err.message, /^\/etc\/cc\/bridge\.json: \$: not valid JSON: Unexpected token/);
    assert.ok(!err.message.includes('\n'), err.message);
    return true;
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-config-'));
  const missing = path.join(dir, 'missing.json');
  assert.throws(() => loadFileConfig(missing), (err) => err instanceof ConfigFileError && err.message === `${missing}: $: cannot read the file: ENOENT`);
  const good = path.join(dir, 'good.json');
  writeFileSync(good, JSON.stringify({ tools: [turtle] }));
  assert.equal(loadFileConfig(good).tools[0].name, 'turtle-refuel');
});

test('diffConfig names what was added, removed and changed; key order does not matter', () => {
  const before = parseFileConfig({ tools: [turtle], servers: [{ id: 'a', command: 'x' }, { id: 'b', command: 'y' }] }, FILE);
  const reordered = Object.fromEntries(Object.entries(turtle).reverse());
  const after = parseFileConfig(
    { tools: [reordered, { ...turtle, name: 'two' }], servers: [{ id: 'a', command: 'x' }, { id: 'b', command: 'z' }, { id: 'c', url: 'http://x' }], endpoints: [{ path: '/t', tool: 'two' }] },
    FILE,
  );
  assert.deepEqual(diffConfig(before, after), {
    tools: { added: ['two'], removed: [], changed: [] },
    servers: { added: ['c'], removed: [], changed: ['b'] },
    endpoints: { added: ['/t -> two'], removed: [], changed: [] },
    any: true,
  });
  assert.equal(diffConfig(after, after).any, false);
  assert.deepEqual(diffConfig(after, before).servers, { added: [], removed: ['c'], changed: ['b'] });
  assert.equal(canonical({ b: [1, { d: 1, c: undefined }], a: null }), '{"a":null,"b":[1,{"d":1}]}');
});

// Bug: a Lua tool's inputSchema could declare keywords the bridge does not enforce (oneOf, $ref,
// format ...): clients saw the constraint, the chunk got arguments outside it. Now refused at load.
test('a Lua tool inputSchema keyword the bridge does not enforce is refused at load, naming the JSON path and keyword', () => {
  const schema = (patch) => ({ tools: [{ ...turtle, inputSchema: { type: 'object', ...patch } }] });
  const at = '$.tools[0].inputSchema';
  rejects(schema({ oneOf: [{ required: ['a'] }] }), `${at}.oneOf`, /^"oneOf" is not enforced by the bridge, so a Lua tool's inputSchema cannot use it; enforced: type, properties, .*; annotations: title, description/);
  for (const k of ['anyOf', 'allOf', 'not', '$ref', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'propertyNames', 'contains', 'prefixItems', 'unevaluatedProperties', '$defs', 'nullable', 'maxlength']) {
    rejects(schema({ [k]: {} }), key(at, k), new RegExp(`^"${k.replace('$', '\\$')}" is not enforced by the bridge`));
  }
  rejects(schema({ properties: { host: { type: 'string', format: 'hostname' } } }), `${at}.properties.host.format`, /^"format" is not enforced by the bridge \(JSON Schema treats it as an annotation\); constrain the text with "pattern"/);
  // every depth: properties, patternProperties, additionalProperties, items
  rejects(schema({ properties: { a: { type: 'array', items: { anyOf: [] } } } }), `${at}.properties.a.items.anyOf`, /not enforced/);
  rejects(schema({ patternProperties: { '^x': { not: {} } } }), `${at}.patternProperties["^x"].not`, /not enforced/);
  rejects(schema({ additionalProperties: { $ref: '#' } }), `${at}.additionalProperties.$ref`, /not enforced/);
  rejects(schema({ properties: { 'my arg': { if: {} } } }), `${at}.properties["my arg"].if`, /not enforced/);
});

test('malformed values of enforced keywords in a Lua tool inputSchema are refused at load', () => {
  const prop = (p) => ({ tools: [{ ...turtle, inputSchema: { type: 'object', properties: { a: p } } }] });
  const at = '$.tools[0].inputSchema.properties.a';
  rejects(prop({ type: 'array', maxItems: -1 }), `${at}.maxItems`, /must be a whole number >= 0, got -1/);
  rejects(prop({ type: 'string', minLength: 1.5 }), `${at}.minLength`, /whole number >= 0, got 1.5/);
  rejects(prop({ type: 'object', maxProperties: '2' }), `${at}.maxProperties`, /whole number >= 0, got "2"/);
  rejects(prop({ type: 'string', pattern: 5 }), `${at}.pattern`, /must be a string \(a regular expression\), got a number/);
  rejects(prop({ type: 'string', pattern: '[a-z' }), `${at}.pattern`, /not a valid regular expression \(JavaScript, with the u flag\)/);
  rejects(prop({ type: 'string', pattern: '(?P<n>x)' }), `${at}.pattern`, /not a valid regular expression/);
  rejects(prop({ type: 'object', patternProperties: { '(': {} } }), `${at}.patternProperties["("]`, /not a valid regular expression/);
  // bug: a pattern that backtracks exponentially was taken, and one crafted argument blocked the bridge
  // for every caller (^(\w+\s?)*$ with 28 characters and a '!': ~3 s); now refused naming tool and pattern
  rejects(prop({ type: 'string', pattern: '^(\\w+\\s?)*$' }), `${at}.pattern`, /^the pattern "\^\(\\\\w\+\\\\s\?\)\*\$" of tool "turtle-refuel" could take exponential time on a crafted argument, blocking the bridge: in the repeated group/);
  rejects(prop({ type: 'object', patternProperties: { '^(a|a)*$': {} } }), `${at}.patternProperties["^(a|a)*$"]`, /^the pattern "\^\(a\|a\)\*\$" of tool "turtle-refuel" could take exponential time/);
  rejects(prop({ type: 'number', exclusiveMinimum: true }), `${at}.exclusiveMinimum`, /must be a number \(the 2020-12 form; draft-04 true\/false is not supported\)/);
  rejects(prop({ type: 'number', maximum: '3' }), `${at}.maximum`, /must be a number, got a string/);
  rejects(prop({ type: 'number', multipleOf: 0 }), `${at}.multipleOf`, /must be a number > 0, got 0/);
  rejects(prop({ type: 'array', uniqueItems: 'yes' }), `${at}.uniqueItems`, /must be true or false, got a string/);
  rejects(prop({ type: 'str' }), `${at}.type`, /must be one of "object", .* or an array of distinct ones/);
  rejects(prop({ type: ['string', 'string'] }), `${at}.type`, /distinct/);
  rejects(prop({ type: [] }), `${at}.type`, /distinct/);
  rejects(prop({ enum: 'x' }), `${at}.enum`, /must be a non-empty array, got a string/);
  rejects(prop({ enum: [] }), `${at}.enum`, /non-empty array, got an empty one/);
  rejects(prop({ type: 'object', required: [1] }), `${at}.required`, /array of property names/);
  rejects(prop({ type: 'array', items: [{ type: 'string' }] }), `${at}.items`, /one schema object \(the array form is not enforced\)/);
  rejects(prop(true), at, /must be a JSON Schema object, got a boolean \(true\/false schemas are not supported\)/);
  rejects(prop({ type: 'object', additionalProperties: 'no' }), `${at}.additionalProperties`, /JSON Schema object, got a string/);
  let deep = { type: 'string' };
  for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
  assert.throws(() => parseFileConfig(prop(deep), FILE), (err) => err.problems.length === 1 && /nests deeper than 32 schemas/.test(err.problems[0].message));
});

test('a Lua tool inputSchema: every problem at once, and every enforced keyword and annotation is accepted', () => {
  assert.throws(
    () => parseFileConfig({ tools: [{ ...turtle, inputSchema: { type: 'object', oneOf: [], properties: { a: { format: 'uri', maxItems: -1 } } } }] }, FILE),
    (err) => {
      assert.deepEqual(err.problems.map((p) => p.path), ['$.tools[0].inputSchema.oneOf', '$.tools[0].inputSchema.properties.a.format', '$.tools[0].inputSchema.properties.a.maxItems']);
      return true;
    },
  );
  const inputSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    title: 'T',
    description: 'D',
    $comment: 'c',
    properties: {
      name: { type: 'string', pattern: '^\\p{L}+$', minLength: 1, maxLength: 9, default: 'a', examples: ['b'], 'x-mcp-header': 'Name' },
      n: { type: ['number', 'null'], minimum: 0, maximum: 9, exclusiveMinimum: -1, exclusiveMaximum: 10, multipleOf: 0.5, deprecated: true },
      list: { type: 'array', items: { enum: [1, 'a', null] }, minItems: 0, maxItems: 3, uniqueItems: true, readOnly: false, writeOnly: false },
      fixed: { const: { any: ['json'] } },
      opts: { type: 'object', minProperties: 1, maxProperties: 2, additionalProperties: { type: 'string' }, patternProperties: { '^x-': { type: 'integer' } }, required: ['k'] },
    },
    required: ['name'],
    additionalProperties: false,
  };
  assert.deepEqual(parseFileConfig({ tools: [{ ...turtle, inputSchema }] }, FILE).tools[0].inputSchema, inputSchema);
});

// Bug: an x-mcp-header that breaks MCP 2026-07-28's rules was accepted at load; 2026-07-28 clients
// must then drop the whole tool from tools/list, so the Lua tool silently vanished for them.
test('a Lua tool x-mcp-header that 2026-07-28 clients would reject is refused at load, naming where and why', () => {
  const schema = (inputSchema) => ({ tools: [{ ...turtle, inputSchema: { type: 'object', ...inputSchema } }] });
  const at = '$.tools[0].inputSchema';
  const h = (jsonPath) => key(jsonPath, 'x-mcp-header');
  rejects(schema({ properties: { a: { type: 'string', 'x-mcp-header': 'Bad Name' } } }), h(`${at}.properties.a`), /HTTP header name token .*got "Bad Name"/);
  rejects(schema({ properties: { a: { type: 'string', 'x-mcp-header': '' } } }), h(`${at}.properties.a`), /header name token/);
  rejects(schema({ properties: { a: { type: 'string', 'x-mcp-header': 7 } } }), h(`${at}.properties.a`), /header name token .*got a number/);
  rejects(schema({ properties: { a: { type: 'number', 'x-mcp-header': 'A' } } }), h(`${at}.properties.a`), /type "string", "integer" or "boolean" .*got "number"/);
  rejects(schema({ properties: { a: { type: ['string', 'null'], 'x-mcp-header': 'A' } } }), h(`${at}.properties.a`), /one type/);
  rejects(schema({ properties: { a: { type: 'object', 'x-mcp-header': 'A' } } }), h(`${at}.properties.a`), /got "object"/);
  rejects(
    schema({ properties: { a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'object', properties: { c: { type: 'integer', 'x-mcp-header': 'REGION' } } } } }),
    h(`${at}.properties.b.properties.c`),
    /"REGION" is already used by \$\.tools\[0\]\.inputSchema\.properties\.a\["x-mcp-header"\] \(names are compared without case\)/,
  );
  const reach = /through "properties" keys alone/;
  rejects(schema({ 'x-mcp-header': 'Root' }), h(`${at}`), reach);
  rejects(schema({ properties: { l: { type: 'array', items: { type: 'string', 'x-mcp-header': 'L' } } } }), h(`${at}.properties.l.items`), reach);
  rejects(schema({ additionalProperties: { type: 'string', 'x-mcp-header': 'X' } }), h(`${at}.additionalProperties`), reach);
  rejects(schema({ patternProperties: { '^x': { type: 'string', 'x-mcp-header': 'X' } } }), h(key(`${at}.patternProperties`, '^x')), reach);
  rejects(schema({ properties: { l: { type: 'array', items: { type: 'object', properties: { d: { type: 'boolean', 'x-mcp-header': 'D' } } } } } }), h(`${at}.properties.l.items.properties.d`), reach);
  // nested objects through properties alone are fine, as are distinct names
  const ok = { type: 'object', properties: { a: { type: 'boolean', 'x-mcp-header': 'Flag' }, b: { type: 'object', properties: { c: { type: 'integer', 'x-mcp-header': 'Count' } } } } };
  assert.deepEqual(parseFileConfig({ tools: [{ ...turtle, inputSchema: ok }] }, FILE).tools[0].inputSchema, ok);
});

test('a tool description may be empty or blank (a title may not); a name used three times points both repeats at its first use', () => {
  for (const description of ['', '   ']) {
    assert.equal(parseFileConfig({ tools: [{ ...turtle, description }] }, FILE).tools[0].description, description, JSON.stringify(description));
  }
  assert.throws(
    () => parseFileConfig({ tools: [turtle, { ...turtle }, { ...turtle }] }, FILE),
    (err) => {
      assert.deepEqual(err.problems, [
        { path: '$.tools[1].name', message: 'tool name "turtle-refuel" is already used at $.tools[0].name' },
        { path: '$.tools[2].name', message: 'tool name "turtle-refuel" is already used at $.tools[0].name' },
      ]);
      return true;
    },
  );
});

test('limits and checks at their edges (found by mutation testing): timeoutMs 300000 taken, 300001 and 1.5 refused; computerId 0 taken, 2^53 refused; lua of 64 KiB taken, one byte more refused however few characters; a URL with only a user or only a password refused', () => {
  const tool = (patch) => ({ tools: [{ name: 't', target: { computerId: 1 }, lua: 'return 1', ...patch }] });
  assert.equal(parseFileConfig(tool({ timeoutMs: 300_000 }), FILE).tools[0].timeoutMs, 300_000);
  rejects(tool({ timeoutMs: 300_001 }), '$.tools[0].timeoutMs', /^must be a whole number of milliseconds from 1 to 300000$/);
  rejects(tool({ timeoutMs: 1.5 }), '$.tools[0].timeoutMs', /^must be a whole number of milliseconds/);
  rejects({ servers: [{ id: 's', command: 'x', timeoutMs: 300_001 }] }, '$.servers[0].timeoutMs', /^must be a whole number of milliseconds/);
  assert.deepEqual(parseFileConfig(tool({ target: { computerId: 0 } }), FILE).tools[0].target, { computerId: 0 });
  rejects(tool({ target: { computerId: 2 ** 53 } }), '$.tools[0].target.computerId', /^must be a whole number >= 0$/);
  assert.equal(parseFileConfig(tool({ lua: 'x'.repeat(65_536) }), FILE).tools[0].lua.length, 65_536);
  rejects(tool({ lua: 'x'.repeat(65_537) }), '$.tools[0].lua', /^is 65537 bytes; at most 65536$/);
  // 32,769 characters, 65,538 bytes: the limit counts bytes
  rejects(tool({ lua: 'é'.repeat(32_769) }), '$.tools[0].lua', /^is 65538 bytes; at most 65536$/);
  for (const url of ['https://user@example.com/mcp', 'https://:secret@example.com/mcp']) {
    rejects({ servers: [{ id: 'h', url }] }, '$.servers[0].url', /^must not hold a user or password/);
  }
});

test('a Lua tool inputSchema at its edges (found by mutation testing): 32 nested schemas taken and 33 refused; a bound or multipleOf of 1e999 (Infinity once parsed) refused; $schema of each supported dialect taken, with or without its empty fragment and in either scheme, and refused below the root', () => {
  const withSchema = (inputSchema) => ({ tools: [{ ...turtle, inputSchema }] });
  const nest = (n) => (n === 0 ? { type: 'string' } : { type: 'object', properties: { a: nest(n - 1) } });
  // the root is depth 0: nest(32)'s innermost schema is at 32, MAX_SCHEMA_DEPTH
  assert.deepEqual(parseFileConfig(withSchema(nest(32)), FILE).tools[0].inputSchema, nest(32));
  const deepest = `$.tools[0].inputSchema${'.properties.a'.repeat(33)}`;
  rejects(withSchema(nest(33)), deepest, /^nests deeper than 32 schemas$/);
  // JSON's 1e999 parses as Infinity: through the file text, as an operator would write it
  const infinite = (keyword) => parseFileConfigText(`{"tools": [{"name": "t", "target": {"computerId": 1}, "lua": "return 1", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "${keyword}": 1e999}}}}]}`, FILE);
  for (const keyword of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']) {
    assert.throws(() => infinite(keyword), (err) => err.problems?.length === 1 && err.problems[0].path === `$.tools[0].inputSchema.properties.n.${keyword}` && /^must be a number/.test(err.problems[0].message), keyword);
  }
  for (const $schema of [
    'https://json-schema.org/draft/2020-12/schema#',
    'https://json-schema.org/draft/2019-09/schema',
    'http://json-schema.org/draft-07/schema#',
    'https://json-schema.org/draft-07/schema',
    'http://json-schema.org/draft-06/schema',
  ]) {
    assert.equal(parseFileConfig(withSchema({ $schema, type: 'object' }), FILE).tools[0].inputSchema.$schema, $schema);
  }
  rejects(withSchema({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }), '$.tools[0].inputSchema.$schema', /names a JSON Schema dialect the bridge does not support/);
  rejects(
    withSchema({ type: 'object', properties: { a: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' } } }),
    '$.tools[0].inputSchema.properties.a.$schema',
    /^may only be at the root of inputSchema/,
  );
});

test('a JSON syntax error whose V8 message quotes the text says only the error, on one line; loading a file leaves no descriptor open (found by mutation testing)', async () => {
  assert.throws(
    () => parseFileConfigText('x\nsecret', FILE),
    (err) => err instanceof ConfigFileError && err.problems.length === 1 && err.problems[0].message === "not valid JSON: Unexpected token 'x'",
  );
  const { readdirSync, existsSync } = await import('node:fs');
  if (!existsSync('/proc/self/fd')) return; // Linux: counting this process's open descriptors
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-fd-'));
  const good = path.join(dir, 'bridge.json');
  writeFileSync(good, JSON.stringify({ tools: [turtle] }));
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{"tools": 5}');
  const open = () => readdirSync('/proc/self/fd').length;
  const before = open();
  for (let i = 0; i < 20; i++) {
    loadFileConfig(good);
    assert.throws(() => loadFileConfig(bad), ConfigFileError);
    assert.throws(() => loadFileConfig(dir), ConfigFileError);
  }
  assert.equal(open(), before, 'every descriptor opened to read the file is closed, whatever the outcome');
  (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
});

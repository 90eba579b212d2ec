// GET /openapi.json: OpenAPI 3.1 from the live registry, checked by a small structural validator
// (the shape rules of OpenAPI 3.1 that a client generator or Swagger UI relies on).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBridge } from '../helpers.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

// the safe tools (built-ins besides probe-computers and exec-lua): tools added later need no edit here
const SAFE_TOOLS = BUILTIN_TOOLS.map((t) => t.name).filter((n) => n !== 'probe-computers' && n !== 'exec-lua');


const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PATH_ITEM_FIELDS = new Set([...METHODS, '$ref', 'summary', 'description', 'servers', 'parameters']);

function resolve(doc, ref) {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => (node && typeof node === 'object' ? node[key] : undefined), doc);
}

/** Problems with `doc` as an OpenAPI 3.1 document; [] when none are found. */
function checkOpenApi(doc) {
  const problems = [];
  const object = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (typeof doc.openapi !== 'string' || !/^3\.1\.\d+$/.test(doc.openapi)) problems.push('openapi must be 3.1.x');
  if (!object(doc.info) || typeof doc.info.title !== 'string' || typeof doc.info.version !== 'string') problems.push('info needs title and version');
  if (!object(doc.paths)) problems.push('paths must be an object');
  const operationIds = new Set();
  const schemaOk = (s, at) => {
    if (!(object(s) || typeof s === 'boolean')) problems.push(`${at}: schema must be an object or boolean`);
  };
  const checkContent = (content, at) => {
    if (!object(content)) return problems.push(`${at}: content must be an object`);
    for (const [type, media] of Object.entries(content)) {
      if (!/^[\w.+-]+\/[\w.+*-]+$/.test(type)) problems.push(`${at}: bad media type ${type}`);
      if (!object(media)) problems.push(`${at}.${type}: media type object expected`);
      else if ('schema' in media) schemaOk(media.schema, `${at}.${type}.schema`);
    }
  };
  const checkResponse = (response, at) => {
    if (!object(response)) return problems.push(`${at}: response must be an object`);
    if ('$ref' in response) return;
    if (typeof response.description !== 'string') problems.push(`${at}: response needs a description`);
    if ('content' in response) checkContent(response.content, at);
  };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith('/')) problems.push(`path ${path} must start with /`);
    if (!object(item)) {
      problems.push(`${path}: path item must be an object`);
      continue;
    }
    for (const [field, op] of Object.entries(item)) {
      if (!PATH_ITEM_FIELDS.has(field)) problems.push(`${path}: unknown field ${field}`);
      if (!METHODS.includes(field)) continue;
      const at = `${field.toUpperCase()} ${path}`;
      if (op.operationId !== undefined) {
        if (typeof op.operationId !== 'string') problems.push(`${at}: operationId must be a string`);
        if (operationIds.has(op.operationId)) problems.push(`${at}: duplicate operationId ${op.operationId}`);
        operationIds.add(op.operationId);
      }
      if (!object(op.responses) || Object.keys(op.responses).length === 0) problems.push(`${at}: responses required`);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!/^([1-5](\d\d|XX)|default)$/.test(status)) problems.push(`${at}: bad status key ${status}`);
        checkResponse(response, `${at} ${status}`);
      }
      if (op.requestBody !== undefined) {
        if (!object(op.requestBody)) problems.push(`${at}: requestBody must be an object`);
        else checkContent(op.requestBody.content, `${at} requestBody`);
      }
    }
  }
  for (const [name, response] of Object.entries(doc.components?.responses ?? {})) checkResponse(response, `components.responses.${name}`);
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) schemaOk(schema, `components.schemas.${name}`);
  for (const [i, server] of (doc.servers ?? []).entries()) {
    if (!object(server) || typeof server.url !== 'string') problems.push(`servers[${i}] needs a url`);
  }
  const walk = (node, at) => {
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${at}[${i}]`));
    else if (object(node)) {
      if (typeof node.$ref === 'string' && resolve(doc, node.$ref) === undefined) problems.push(`${at}: $ref ${node.$ref} does not resolve`);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}.${k}`);
    }
  };
  walk(doc, '$');
  return problems;
}

const base = (bridge) => bridge.mcpUrl.replace(/\/mcp$/, '');
const getDoc = async (bridge) => {
  const res = await fetch(`${base(bridge)}/openapi.json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /application\/json/);
  return res.json();
};

test('the checker finds what breaks a document', () => {
  const broken = {
    openapi: '3.0.0',
    info: { title: 't' },
    paths: {
      tools: {},
      '/a': { post: { operationId: 'x', responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } } } } },
      '/b': { get: { operationId: 'x', responses: {} }, bogus: 1 },
    },
  };
  assert.deepEqual(checkOpenApi(broken), [
    'openapi must be 3.1.x',
    'info needs title and version',
    'path tools must start with /',
    'POST /a 200: response needs a description',
    'GET /b: duplicate operationId x',
    'GET /b: responses required',
    '/b: unknown field bogus',
    '$.paths./a.post.responses.200.content.application/json.schema: $ref #/components/schemas/Nope does not resolve',
  ]);
});

test('GET /openapi.json: valid OpenAPI 3.1 with one POST /tools/<name> per tool, schemas as declared', () =>
  withBridge({}, async (bridge) => {
    const doc = await getDoc(bridge);
    assert.deepEqual(checkOpenApi(doc), []);
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../../package.json', import.meta.url), 'utf8')).version);
    assert.deepEqual(doc.servers, [{ url: base(bridge) }]);
    assert.deepEqual(Object.keys(doc.paths), ['/tools', '/computers', '/tools/probe-computers', '/tools/exec-lua', ...SAFE_TOOLS.map((n) => `/tools/${n}`)]);
    for (const tool of bridge.tools.list()) {
      const op = doc.paths[`/tools/${tool.name}`].post;
      assert.equal(op.operationId, tool.name);
      assert.equal(op.description, tool.description);
      assert.deepEqual(op.requestBody.content['application/json'].schema, tool.inputSchema);
      assert.deepEqual(op.responses['200'].content['application/json'].schema.properties.structuredContent, tool.outputSchema);
      assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '403', '404', '405', '413', '422', '429', '500', '503', '504']);
    }
    assert.match(doc.components.responses.Timeout.description, /timeout/);
    assert.equal((await fetch(`${base(bridge)}/openapi.json`, { method: 'POST' })).headers.get('allow'), 'GET, HEAD');
  }));

test('the document follows the registry and the aliases at request time', () =>
  withBridge({ CC_EXEC_LUA: 'off' }, async (bridge) => {
    bridge.tools.setSource({
      id: 'upstream:x',
      tools: () => [
        { name: 'x__listTools', title: 'Odd', description: 'd', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, call: async () => ({ content: [] }) },
        { name: 'listTools', title: 'Clash', description: 'd', inputSchema: { type: 'object' }, call: async () => ({ content: [] }) },
      ],
    });
    bridge.endpoints.apply([
      { path: '/gone', tool: 'exec-lua' }, // first: the aliases after it are still documented
      { path: '/ping-all', tool: 'probe-computers' },
      { path: '/ping/all', tool: 'probe-computers' },
    ]);
    const doc = await getDoc(bridge);
    assert.deepEqual(checkOpenApi(doc), []);
    assert.equal(doc.paths['/tools/exec-lua'], undefined, 'a disabled tool is not offered');
    assert.equal(doc.paths['/gone'], undefined, 'an alias to a tool not offered is left out');
    assert.equal(doc.paths['/tools/x__listTools'].post.operationId, 'x__listTools');
    assert.equal(doc.paths['/tools/listTools'].post.operationId, 'listTools');
    assert.equal(doc.paths['/tools'].get.operationId, 'bridge.listTools');
    assert.equal(doc.paths['/computers'].get.operationId, 'listComputers');
    assert.equal(doc.paths['/ping-all'].post.operationId, 'alias_ping_all');
    assert.equal(doc.paths['/ping/all'].post.operationId, 'alias_ping_all_');
    assert.deepEqual(doc.paths['/ping-all'].post.responses['200'].content['application/json'].schema.properties.structuredContent,
      bridge.tools.get('probe-computers').outputSchema);
    assert.deepEqual(doc.paths['/tools/listTools'].post.responses['200'].content['application/json'].schema.properties.structuredContent, { type: 'object' });
    bridge.tools.removeSource('upstream:x');
    assert.equal((await getDoc(bridge)).paths['/tools/listTools'], undefined);
  }));

test('any method but GET and HEAD on /openapi.json is 405 with the REST routes\' error body, {"error": {"code": "method_not_allowed"}} (found by mutation testing: the router\'s own 405, another body shape, passed every test)', () =>
  withBridge({}, async (bridge) => {
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const res = await fetch(new URL('/openapi.json', bridge.mcpUrl), { method });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
      assert.deepEqual(await res.json(), { error: { code: 'method_not_allowed', message: `${method} is not allowed on /openapi.json; use GET, HEAD` } });
    }
  }));

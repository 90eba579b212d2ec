// The route table: exact and prefix routes, HEAD via GET, 405 with Allow, custom fallbacks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from '../../dist/surfaces/router.js';

const h = (name) => Object.assign(() => name, { id: name });

test('exact routes, prefix routes with the rest and the query, HEAD served by GET', () => {
  const router = new Router().add('/health', { GET: h('health') }).add('/tools/*', { POST: h('call'), GET: h('list') });
  const health = router.match('HEAD', '/health?x=1');
  assert.equal(health.kind, 'found');
  assert.equal(health.handler.id, 'health');
  assert.equal(health.ctx.query.get('x'), '1');
  const call = router.match('POST', '/tools/exec-lua?service=files');
  assert.equal(call.handler.id, 'call');
  assert.equal(call.ctx.rest, 'exec-lua');
  assert.equal(call.ctx.path, '/tools/exec-lua');
  assert.equal(call.ctx.query.get('service'), 'files');
  assert.equal(router.match('GET', '/nope').kind, 'not-found');
});

test('a method the route lacks is 405 with Allow; "*" answers every other method', () => {
  const router = new Router().add('/health', { GET: h('health') }).add('/mcp', { POST: h('post'), '*': h('other') });
  assert.deepEqual(
    (({ kind, allow }) => ({ kind, allow }))(router.match('POST', '/health')),
    { kind: 'method-not-allowed', allow: 'GET, HEAD' },
  );
  assert.equal(router.match('GET', '/mcp').handler.id, 'other');
  assert.equal(router.match('POST', '/mcp').handler.id, 'post');
});

test('a path is taken once: exact duplicates and paths under a prefix are refused', () => {
  const router = new Router().add('/mcp', {}).add('/tools/*', {});
  assert.throws(() => router.add('/mcp', {}), /already taken/);
  assert.throws(() => router.add('/tools/x', {}), /already taken/);
  assert.throws(() => router.add('/tools/a/*', {}), /already taken/);
  assert.throws(() => new Router().add('/a/b', {}).add('/a/*', {}), /already taken/);
  assert.equal(router.has('/tools'), false);
  assert.equal(router.has('/tools/a'), true);
  assert.equal(router.has('/refuel'), false);
});

test('endpoint aliases: none when absent or null; a path is at most 200 characters', async () => {
  const { EndpointAliases } = await import('../../dist/surfaces/endpoints.js');
  const aliases = new EndpointAliases(new Router(), () => ({}));
  assert.deepEqual(aliases.check(undefined), []);
  assert.deepEqual(aliases.check(null), []);
  assert.deepEqual(aliases.check({}).map((p) => p.message), ['must be an array of {"path", "tool"} objects']);
  assert.deepEqual(aliases.check([{ path: `/${'a'.repeat(199)}`, tool: 'x' }]), []);
  assert.deepEqual(aliases.check([{ path: `/${'a'.repeat(200)}`, tool: 'x' }]).map((p) => p.path), ['$.endpoints[0].path']);
  assert.match(aliases.check([{ path: `/${'a'.repeat(200)}`, tool: 'x' }])[0].message, /at most 200 characters/);
});

test('remove: an exact route or a prefix route, after which its paths are free again', () => {
  const router = new Router().add('/refuel', {}).add('/tools/*', {});
  assert.equal(router.remove('/tools/*'), true);
  assert.equal(router.has('/tools/x'), false);
  assert.equal(router.match('POST', '/tools/x').kind, 'not-found');
  assert.equal(router.remove('/tools/*'), false);
  assert.equal(router.remove('/refuel'), true);
  assert.equal(router.remove('/refuel'), false);
  router.add('/tools/x', {}).add('/refuel/*', {});
});

// The live tool registry: sources merge in order, names stay unique, changes are announced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../dist/config.js';
import { ToolRegistry, ToolNameCollisionError } from '../../dist/tools/registry.js';
import { builtinSource } from '../../dist/tools/builtins.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

// the safe tools (built-ins besides probe-computers and exec-lua): tools added later need no edit here
const SAFE_TOOLS = BUILTIN_TOOLS.map((t) => t.name).filter((n) => n !== 'probe-computers' && n !== 'exec-lua');


const tool = (name, extra = {}) => ({ name, title: name, description: name, inputSchema: { type: 'object' }, call: async () => ({ content: [] }), ...extra });
const source = (id, tools) => ({ id, tools: () => tools });

test('built-ins first, then sources in the order they were added; a disabled tool is known but not listed', () => {
  const registry = new ToolRegistry(loadConfig({ CC_EXEC_LUA: 'off' }));
  registry.setSource(builtinSource);
  registry.setSource(source('config', [tool('b'), tool('a')]));
  assert.deepEqual(registry.list().map((t) => t.name), ['probe-computers', ...SAFE_TOOLS, 'b', 'a']);
  assert.equal(registry.get('exec-lua').name, 'exec-lua');
  assert.equal(registry.isEnabled(registry.get('exec-lua')), false);
  assert.equal(registry.get('nope'), undefined);
});

test('a name clash throws ToolNameCollisionError and changes nothing', () => {
  const registry = new ToolRegistry(loadConfig({}));
  registry.setSource(builtinSource);
  registry.setSource(source('config', [tool('x')]));
  const clash = source('upstream:a', [tool('y'), tool('exec-lua')]);
  assert.deepEqual(registry.collisions(clash).map((e) => e.toolName), ['exec-lua']);
  assert.throws(() => registry.setSource(clash), (err) => err instanceof ToolNameCollisionError && err.code === 'ERR_TOOL_NAME_COLLISION' && /exec-lua/.test(err.message));
  assert.deepEqual(registry.list().map((t) => t.name), ['probe-computers', 'exec-lua', ...SAFE_TOOLS, 'x']);
  assert.equal(registry.get('y'), undefined);
});

test('replacing, refreshing and removing a source notify subscribers only on a real change', () => {
  const registry = new ToolRegistry(loadConfig({}));
  let changes = 0;
  const off = registry.onChange(() => changes++);
  const tools = [tool('a')];
  const live = source('upstream:s', tools);
  registry.setSource(live);
  assert.equal(changes, 1);
  registry.refresh('upstream:s');
  assert.equal(changes, 1, 'same tools: no change');
  tools.push(tool('b'));
  registry.refresh('upstream:s');
  assert.equal(changes, 2);
  assert.deepEqual(registry.list().map((t) => t.name), ['a', 'b']);
  registry.setSource(source('upstream:s', [tool('c')]));
  assert.deepEqual(registry.list().map((t) => t.name), ['c']);
  registry.removeSource('upstream:s');
  registry.removeSource('never-added');
  registry.refresh('never-added');
  assert.equal(changes, 4);
  assert.deepEqual(registry.list(), []);
  off();
  registry.setSource(source('x', [tool('z')]));
  assert.equal(changes, 4, 'unsubscribed');
});

test('watch: once per burst of changes on the next turn, never for no change; a watcher ended during delivery is not told; watching drains to 0', async () => {
  const registry = new ToolRegistry(loadConfig({}));
  const told = { a: 0, b: 0 };
  const turn = () => new Promise((r) => setImmediate(r));
  const offA = registry.watch(() => {
    told.a++;
    offB(); // ends the other stream while being told
  });
  const offB = registry.watch(() => told.b++);
  assert.equal(registry.watching, 2);
  registry.setSource(source('s', [tool('a')]));
  registry.setSource(source('t', [tool('b')]));
  registry.removeSource('t');
  assert.deepEqual(told, { a: 0, b: 0 }, 'not before the turn ends');
  await turn();
  assert.equal(told.a, 1, 'three changes in one turn: one notice');
  assert.equal(told.b, 0, 'ended before its turn came');
  assert.equal(registry.watching, 1);
  registry.refresh('s');
  await turn();
  assert.equal(told.a, 1, 'no change: no notice');
  offA();
  offA();
  assert.equal(registry.watching, 0);
  registry.setSource(source('s', [tool('c')]));
  await turn();
  assert.equal(told.a, 1);
});

test('watch: a watcher that throws is dropped with a warning and the others are still told (it runs on its own turn, where a throw would end the bridge)', async () => {
  const registry = new ToolRegistry(loadConfig({}));
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    let told = 0;
    registry.watch(() => {
      throw new Error('stream broke');
    });
    registry.watch(() => told++);
    registry.setSource(source('s', [tool('a')]));
    await new Promise((r) => setImmediate(r));
    assert.equal(told, 1, 'the other watcher is told');
    assert.equal(registry.watching, 1, 'the throwing watcher is dropped');
    await new Promise((r) => setImmediate(r));
    const ours = warnings.filter((w) => w.code === 'CC_TOOL_WATCHER_THREW');
    assert.equal(ours.length, 1);
    assert.match(ours[0].message, /stream broke/);
    registry.setSource(source('s', [tool('b')]));
    await new Promise((r) => setImmediate(r));
    assert.equal(told, 2);
  } finally {
    process.off('warning', onWarning);
  }
});

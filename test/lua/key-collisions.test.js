// exec-lua returned tables: Lua keys whose JSON text is the same (the number 1 and the string "1",
// true and "true", a byte string key shown as \233 and the UTF-8 key \233, tables whose tostring
// agrees) must each keep their value under its own name. Before, the second got " (<type> key)"
// and a third overwrote an earlier entry, so a returned value was silently lost. Now a UTF-8
// string key is always its own text and every other colliding key gets " (<type> key)", then
// " (<type> key 2)", " (<type> key 3)" ... (README "Byte strings"), and the descriptor's `bytes`
// paths use those names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';
import { exact } from './exact.js';
import { COLLIDING_CODE, checkColliding } from './collisions.js';

const T = { timeout: 60000 };

async function linked(t) {
  const bridge = await startFakeBridge();
  t.after(() => bridge.close());
  const c = useComputer(t, { url: bridge.url });
  await c.waitForOutput(/waiting\s+for\s+requests/);
  return bridge.link(0);
}

async function returns(link, code) {
  const res = await link.exec(code);
  assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
  assert.equal(res.result.truncated, false);
  return res.result.returns;
}

describeLua('exec-lua: colliding table keys each keep their value (key-collisions)', () => {
  test('three and more keys with the same JSON text: every one kept under a distinct, documented name', T, async (t) => {
    const link = await linked(t);
    checkColliding(await returns(link, COLLIDING_CODE));
  });

  test('300 keys with the same text, and literal keys in the way: all kept, nested byte strings at the right path', T, async (t) => {
    const link = await linked(t);
    const [d] = await returns(link, `
      local same = { __tostring = function() return "k" end }
      local t = { k = 0, ["k (table key 5)"] = -5, ["k (table key 200)"] = -200 }
      for i = 1, 300 do t[setmetatable({}, same)] = { i, "\\200" .. i } end
      return t`);
    const names = Object.keys(d.value);
    assert.equal(names.length, 303);
    const expectedNames = ['k', 'k (table key)', ...Array.from({ length: 301 }, (_, i) => `k (table key ${i + 2})`)];
    assert.deepEqual(names.sort(), expectedNames.sort());
    assert.equal(d.value['k (table key 5)'], -5);
    assert.equal(d.value['k (table key 200)'], -200);
    const got = Object.entries(d.value).filter(([, v]) => Array.isArray(v)).map(([, v]) => v[0]).sort((x, y) => x - y);
    assert.deepEqual(got, Array.from({ length: 300 }, (_, i) => i + 1));
    // Each nested byte string is listed at its own key's name.
    assert.equal(d.bytes.length, 300);
    for (const e of d.bytes) {
      assert.equal(e.path.length, 2);
      assert.equal(e.path[1], 1);
      const [i] = d.value[e.path[0]];
      assert.deepEqual(Buffer.from(e.base64, 'base64'), Buffer.concat([Buffer.from([200]), Buffer.from(String(i))]));
    }
    exact(d);
  });
});

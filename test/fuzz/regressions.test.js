// Regression tests for the defects the hostile-input fuzz suite (test/fuzz/) found, each named after
// its defect, over a real bridge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBridge } from '../helpers.js';

test('405 without a message: a wrong method on /health or /metrics names the path and the methods to use', () =>
  withBridge({}, async (bridge) => {
    const origin = new URL(bridge.mcpUrl).origin;
    for (const [method, path] of [['POST', '/health'], ['DELETE', '/metrics'], ['PUT', '/health']]) {
      const res = await fetch(origin + path, { method });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
      // before: {"error":"method not allowed"} alone, the one error body on the listener without a message
      assert.deepEqual(await res.json(), { error: 'method not allowed', message: `${method} is not allowed on ${path}; use GET, HEAD` });
    }
  }));

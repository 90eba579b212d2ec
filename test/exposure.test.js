// The exposure guard: which bindings refuse to start, which warn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../dist/config.js';
import { checkExposure } from '../dist/exposure.js';

const TOKEN = 'exposure-token-0123456789';
const check = (env) => checkExposure(loadConfig(env));

test('MCP on a non-loopback address without a token refuses to start, explaining how to fix it', () => {
  for (const host of ['0.0.0.0', '::', '192.168.1.5', 'example.com']) {
    const { fatal } = check({ MCP_HOST: host, CC_LINK_TOKEN: TOKEN });
    assert.match(fatal, /refusing to start/);
    assert.match(fatal, /MCP_AUTH_TOKEN/);
    assert.match(fatal, /MCP_ALLOW_UNAUTHENTICATED=1/);
  }
});

test('MCP_ALLOW_UNAUTHENTICATED=1 turns the refusal into a loud warning', () => {
  const { fatal, warnings } = check({ MCP_HOST: '0.0.0.0', MCP_ALLOW_UNAUTHENTICATED: '1', CC_LINK_TOKEN: TOKEN });
  assert.equal(fatal, null);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^WARNING: .*run code on every linked computer/);
});

test('a token, or a loopback address, needs no warning for MCP', () => {
  for (const env of [{ MCP_HOST: '0.0.0.0', MCP_AUTH_TOKEN: TOKEN }, { MCP_HOST: '127.0.0.1' }, { MCP_HOST: 'localhost' }, { MCP_HOST: '::1' }]) {
    const { fatal, warnings } = check({ ...env, CC_LINK_TOKEN: TOKEN });
    assert.equal(fatal, null);
    assert.deepEqual(warnings, []);
  }
});

test('a link port without CC_LINK_TOKEN warns: loudly when it is not on loopback', () => {
  const open = check({ CC_LINK_HOST: '0.0.0.0' });
  assert.equal(open.fatal, null);
  assert.match(open.warnings[0], /^WARNING: CC_LINK_HOST=0\.0\.0\.0 .*replace the real one/);
  const local = check({ CC_LINK_HOST: '127.0.0.1' });
  assert.match(local.warnings[0], /^note: CC_LINK_TOKEN is not set/);
});

test('bug: the warning for a link port off loopback without CC_LINK_TOKEN did not say web pages can link through DNS rebinding, nor the loopback fix', () => {
  for (const host of ['0.0.0.0', '192.168.1.5', '::']) {
    const [warning] = check({ CC_LINK_HOST: host }).warnings;
    assert.match(warning, /any web page opened in a browser that can reach it, through DNS rebinding/);
    assert.match(warning, /Set CC_LINK_TOKEN \(and mcp\.token on each computer\), or CC_LINK_HOST=127\.0\.0\.1 when Minecraft runs on this machine\.$/);
  }
  // on loopback the note is unchanged: rebinding to a loopback name is refused there (a non-loopback Host)
  assert.doesNotMatch(check({ CC_LINK_HOST: '127.0.0.1' }).warnings[0], /rebinding/);
  // with a token, nothing
  assert.deepEqual(check({ CC_LINK_HOST: '0.0.0.0', CC_LINK_TOKEN: TOKEN }).warnings, []);
});

test('the link warnings say which ids are open: those not pinned by a key, or every id with CC_LINK_PIN=off', () => {
  for (const host of ['0.0.0.0', '127.0.0.1']) {
    assert.match(check({ CC_LINK_HOST: host }).warnings[0], /link as any computer id not yet pinned by its computer's key \(CC_LINK_PIN\)/);
    const off = check({ CC_LINK_HOST: host, CC_LINK_PIN: 'off' }).warnings[0];
    assert.match(off, /link as any computer id(,| and)/);
    assert.doesNotMatch(off, /pinned/);
    const strict = check({ CC_LINK_HOST: host, CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: '/var/lib/pins' }).warnings[0];
    assert.match(strict, /link as a computer id the operator let in \(cc-mcp pin-reset\) before its computer does \(CC_LINK_PIN=strict\)/);
  }
});

test('stdio mode without MCP_PORT opens no MCP HTTP port: MCP_HOST is not judged, the link port still is', () => {
  const env = { MCP_HOST: '0.0.0.0', CC_LINK_HOST: '0.0.0.0' };
  const stdio = checkExposure(loadConfig(env), { http: false });
  assert.equal(stdio.fatal, null);
  assert.equal(stdio.warnings.length, 1);
  assert.match(stdio.warnings[0], /^WARNING: CC_LINK_HOST=0\.0\.0\.0 /);
  assert.doesNotMatch(stdio.warnings.join('\n'), /MCP_HOST/);
  // with the HTTP listener (HTTP mode, or --stdio with MCP_PORT) the refusal stands
  assert.match(checkExposure(loadConfig(env), { http: true }).fatal, /^refusing to start: MCP_HOST=0\.0\.0\.0/);
  assert.match(check(env).fatal, /^refusing to start/);
});

// A failing suite made with describeLua or describeCraftos names its own test file as its location in
// the TAP output (node:test takes it from the direct caller of describe), not lua-env.js or
// craftos.js: a rerun of the failed test files reads the file from there.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { CRAFTOS_DIR } from './craftos.js';
import { LUA, LUAC } from './lua-env.js';
import { REPO } from './computer.js';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'failing-suites.js');

test('a failing describeLua / describeCraftos suite is located in its test file', { skip: LUA && LUAC ? false : 'no lua5.2' }, async () => {
  // NODE_TEST_CONTEXT would make the child report to this runner instead of printing TAP
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  const out = await new Promise((resolve) => {
    execFile(process.execPath, ['--test', '--test-reporter=tap', FIXTURE], { env: { ...env, CI: 'true' } }, (_err, stdout) => resolve(stdout));
  });
  const suites = out.split('\n').filter((l) => /^not ok \d+ - /.test(l)).map((l) => l.replace(/^not ok \d+ - /, ''));
  assert.deepEqual(suites, CRAFTOS_DIR ? ['a describeLua suite', 'a describeCraftos suite'] : ['a describeLua suite']);
  const locations = [...out.matchAll(/^ {2}location: '([^']*)'/gm)].map((m) => m[1].replace(/:\d+:\d+$/, ''));
  assert.deepEqual(locations, suites.map(() => FIXTURE));
});

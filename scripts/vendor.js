#!/usr/bin/env node
// npm run vendor -- <dir>: writes a self-contained copy of the bridge (dist with the computer program, package.json,
// README and the one runtime dependency, ws) that runs as `node <dir>/dist/index.js` on a host
// with nothing installed but Node >= 20. Run after a build (the npm script builds first).
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MARKER = '.cc-mcp-bridge-vendor';

function fail(message) {
  process.stderr.write(`vendor: ${message}\n`);
  process.exit(2);
}

const [target, ...extra] = process.argv.slice(2);
if (!target || extra.length || target.startsWith('-')) fail('usage: npm run vendor -- <dir>');
const dir = path.resolve(target);
if (!existsSync(path.join(root, 'dist', 'index.js'))) fail('dist/ is missing; run npm run build first');
if (dir === root || root.startsWith(dir + path.sep)) fail(`${dir} contains the project itself`);
if (existsSync(dir) && readdirSync(dir).length > 0) {
  // refresh a folder this script wrote before; never clear anything else
  if (!existsSync(path.join(dir, MARKER))) fail(`${dir} is not empty and was not written by npm run vendor`);
  for (const name of ['dist', 'lua', 'node_modules']) rmSync(path.join(dir, name), { recursive: true, force: true });
}
mkdirSync(dir, { recursive: true });

const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.map') });
cpSync(path.join(root, 'README.md'), path.join(dir, 'README.md'));

// each runtime dependency as installed here, copied whole (ws has no dependencies of its own)
const require = createRequire(path.join(root, 'package.json'));
for (const name of Object.keys(pkg.dependencies ?? {})) {
  const from = path.dirname(require.resolve(`${name}/package.json`));
  const dep = JSON.parse(readFileSync(path.join(from, 'package.json'), 'utf8'));
  if (Object.keys(dep.dependencies ?? {}).length) fail(`${name} has dependencies of its own; vendoring copies one level only`);
  cpSync(from, path.join(dir, 'node_modules', name), { recursive: true, dereference: true });
}

const { name, version, description, type, bin, engines, license, dependencies } = pkg;
const vendored = { name, version, description, type, bin, engines, license, dependencies, private: true };
writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(vendored, null, 2)}\n`);
writeFileSync(path.join(dir, MARKER), `written by npm run vendor from ${name} ${version}\n`);
process.stdout.write(`vendored ${name} ${version} into ${dir}\nrun: node ${path.join(dir, 'dist', 'index.js')}\n`);

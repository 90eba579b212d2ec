// Finds the Lua 5.2 interpreter the Lua tests need, and decides what happens
// without it: skipped with one line on a developer machine, a failure in CI.
import { accessSync, constants, openSync, closeSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

export const INSTALL_HINT = 'install Lua 5.2: apt-get install lua5.2';

/** Absolute path of an executable found on PATH, or null. */
export function findOnPath(name, envPath = process.env.PATH ?? '') {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

export const LUA = findOnPath('lua5.2');
export const LUAC = findOnPath('luac5.2');

// Each test file runs in its own process under `node --test`, all children of
// one runner. Only the first file to ask reports the skip, so a machine
// without Lua sees a single line; the others register no tests at all.
function firstToReportSkip() {
  let key = `pid-${process.ppid}`;
  try {
    // Field 22 of /proc/<pid>/stat is the start time: it tells runs apart
    // even when a pid is reused.
    const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    key += `-${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
  } catch {
    return true;
  }
  const dir = path.join(tmpdir(), 'cc-mcp-bridge-lua-skip');
  try {
    mkdirSync(dir, { recursive: true });
    closeSync(openSync(path.join(dir, key), 'wx'));
    return true;
  } catch {
    return false;
  }
}

/**
 * describe() for tests that need lua5.2 (and luac5.2). Without them the
 * suite is replaced: by one failing test when CI=true, by one skipped test
 * (first file only) otherwise. With them it IS node:test's describe, not a
 * wrapper: node:test takes a suite's location from its direct caller, so a
 * failing suite names its test file (what a rerun of the failed files
 * reads from the TAP output), not this file.
 */
export const describeLua = LUA && LUAC ? describe : withoutLua;

function withoutLua(name) {
  if (process.env.CI === 'true') {
    return test(`${name}: lua5.2 and luac5.2 are required in CI`, () => {
      throw new Error(`lua5.2/luac5.2 not found on PATH; ${INSTALL_HINT}`);
    });
  }
  if (firstToReportSkip()) return test('Lua tests', { skip: INSTALL_HINT }, () => {});
  return undefined;
}

// A child process for the MCP_SESSION_KEY_FILE race test (session-key-race.test.js): it loads the
// module once, prints "ready", then for each path it reads on stdin (one a line) calls
// loadSessionKey(path) at once and prints one JSON line: the sha256 of the key it got (never the
// key), whether it made the file, or the error message. Several of these given the same line at
// the same moment race on one missing file, as bridges started together do.
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { loadSessionKey } from '../../dist/surfaces/session-key.js';

const lines = createInterface({ input: process.stdin });
lines.on('line', (path) => {
  let answer;
  try {
    const loaded = loadSessionKey(path);
    answer = { path, digest: createHash('sha256').update(loaded.key).digest('hex'), made: loaded.made };
  } catch (err) {
    answer = { path, error: err.message };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
});
process.stdout.write('ready\n');

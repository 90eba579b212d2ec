// Writes a CC_CONFIG file (an object as JSON, or raw text) into a fresh temp directory.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function writeConfig(content, file = path.join(mkdtempSync(path.join(tmpdir(), 'cc-config-')), 'bridge.json')) {
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

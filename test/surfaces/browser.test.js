// CORS seen by a real browser: headless Chromium loads a page from one origin and calls tools/list on
// the bridge with fetch (a JSON POST with MCP-Protocol-Version, so the browser sends a preflight first).
// Allowed origins (loopback, MCP_ALLOWED_ORIGINS) read the answer; a foreign one is blocked.
// Skips, saying why, when no Chromium is installed (Debian: apt-get install chromium); under CI=true
// (.ci/run installs it) a missing Chromium fails instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { withBridge } from '../helpers.js';

const CHROMIUM = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => p && existsSync(p));
const why = CHROMIUM ? false : 'no Chromium found (set CHROMIUM, or apt-get install chromium): the real-browser CORS check did not run';

if (why && process.env.CI === 'true') {
  test('real browser: Chromium is required in CI', () => {
    throw new Error(`${why}; .ci/run installs it`);
  });
}

const page = (mcpUrl) => `<!doctype html><meta charset="utf-8"><title>cors</title><script>
(async () => {
  let report;
  try {
    const res = await fetch(${JSON.stringify(mcpUrl)}, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const body = await res.json();
    report = { ok: true, status: res.status, tools: body.result.tools.map((t) => t.name), version: res.headers.get('mcp-protocol-version') };
  } catch (err) {
    report = { ok: false, error: String(err) };
  }
  await fetch('/result', { method: 'POST', body: JSON.stringify(report) });
})();
</script>`;

// Requests a page may send with no preflight (no custom header; body a string, form data, an untyped
// Blob): the browser picks the Content-Type. The page reports each answer's status and error.
const simplePage = (mcpUrl) => `<!doctype html><meta charset="utf-8"><title>simple</title><script>
(async () => {
  const report = {};
  const json = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } });
  const bodies = { text: json, form: new URLSearchParams({ a: '1' }), multipart: new FormData(), untyped: new Blob([json]) };
  for (const [name, body] of Object.entries(bodies)) {
    try {
      const res = await fetch(${JSON.stringify(mcpUrl)}, { method: 'POST', body });
      const answer = await res.json();
      report[name] = { status: res.status, message: answer.error ? answer.error.message : null };
    } catch (err) {
      report[name] = { error: String(err) };
    }
  }
  await fetch('/result', { method: 'POST', body: JSON.stringify(report) });
})();
</script>`;

/** A page server on 127.0.0.1 (its port is known before the bridge starts, for MCP_ALLOWED_ORIGINS). */
async function pageServer(pageOf = page) {
  let deliver;
  let mcpUrl = '';
  const reported = new Promise((resolve) => (deliver = resolve));
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let text = '';
      req.setEncoding('utf8').on('data', (c) => (text += c)).on('end', () => {
        res.end('ok');
        deliver(JSON.parse(text));
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(pageOf(mcpUrl));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, reported, setMcpUrl: (url) => (mcpUrl = url), close: () => server.close() };
}

/** Opens http://<host>:<port>/ in headless Chromium; resolves with what the page reported. */
async function openPage(pages, host) {
  const profile = mkdtempSync(path.join(tmpdir(), 'cc-chromium-'));
  const browser = spawn(
    CHROMIUM,
    [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions', '--disable-dev-shm-usage',
      `--user-data-dir=${profile}`,
      // any name resolves to this machine; the Origin the bridge sees is still that name
      `--host-resolver-rules=MAP ${host} 127.0.0.1`,
      `http://${host}:${pages.port}/`,
    ],
    { stdio: 'ignore', detached: true },
  );
  const exited = new Promise((resolve) => browser.once('exit', resolve));
  try {
    const early = exited.then((code) => {
      throw new Error(`chromium exited (${code}) before the page reported`);
    });
    return await Promise.race([pages.reported, early]);
  } finally {
    // the browser and its helper processes: one process group, started here
    try {
      process.kill(-browser.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
    pages.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

async function withPage(host, allowed, fn, pageOf = page, urlOf = (bridge) => bridge.mcpUrl) {
  const pages = await pageServer(pageOf);
  const env = allowed ? { MCP_ALLOWED_ORIGINS: `http://${host}:${pages.port}` } : {};
  return withBridge(env, async (bridge) => {
    pages.setMcpUrl(urlOf(bridge));
    return fn(await openPage(pages, host), bridge);
  });
}

test('real browser: a page from a loopback origin calls tools/list with fetch (preflight passed, answer readable)', { skip: why, timeout: 120_000 }, () =>
  withPage('127.0.0.1', false, (report) => {
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(report.status, 200);
    assert.ok(report.tools.includes('probe-computers'), report.tools.join(','));
  }));

test('real browser: a page from an origin in MCP_ALLOWED_ORIGINS reads the answer too', { skip: why, timeout: 120_000 }, () =>
  withPage('allowed.example', true, (report) => {
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.ok(report.tools.includes('probe-computers'), report.tools.join(','));
  }));

test('real browser: a foreign origin is refused (403, no CORS headers: the page cannot read anything)', { skip: why, timeout: 120_000 }, () =>
  withPage('foreign.example', false, (report, bridge) => {
    assert.equal(report.ok, false, JSON.stringify(report));
    assert.match(report.error, /TypeError/);
    assert.ok(bridge.logs.some((l) => /rejected request from Origin "http:\/\/foreign\.example:\d+"/.test(l)), bridge.logs.join('\n'));
  }));

// Before: a page could drive tools with requests the browser sends without a preflight (the Origin
// check is the only guard then; here the origin is an allowed one, so it passes).
test('bug: real browser: a page\'s simple requests (text/plain, form, multipart bodies: no preflight) reached tools/call; now 415, while an untyped body (no Content-Type) is answered', { skip: why, timeout: 120_000 }, () =>
  withPage('127.0.0.1', false, (report) => {
    for (const name of ['text', 'form', 'multipart']) {
      assert.equal(report[name]?.status, 415, JSON.stringify(report));
      assert.match(report[name].message, /^Unsupported Media Type: the Content-Type header is "(text\/plain;charset=UTF-8|application\/x-www-form-urlencoded;charset=UTF-8|multipart\/form-data; boundary=.*)"/);
    }
    // readable cross-origin only with Access-Control-Allow-Origin, which the bridge sets only when the
    // request carried an Origin: the untyped body came with one, so the Origin check saw it
    assert.equal(report.untyped?.status, 200, JSON.stringify(report));
  }, simplePage));

// A page opening a WebSocket to the link port (WebSockets have no same-origin rule) and saying hello
// as computer 77: it reports the bridge's first frame, or that the socket never opened.
const linkPage = (linkUrl) => `<!doctype html><meta charset="utf-8"><title>link</title><script>
const report = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
const ws = new WebSocket(${JSON.stringify('LINK')}.replace('LINK', ${JSON.stringify(linkUrl)}));
let opened = false;
ws.onopen = () => { opened = true; ws.send(JSON.stringify({ type: 'hello', computerId: 77, computerLabel: 'page' })); };
ws.onmessage = (e) => { report({ opened, frame: JSON.parse(e.data) }); ws.close(); };
ws.onclose = () => { if (!opened) report({ opened }); };
</script>`;

test('bug: real browser: a page from any site opened a WebSocket to the link port and linked as a computer (no CC_LINK_TOKEN); now the handshake gets 403', { skip: why, timeout: 120_000 }, () =>
  withPage(
    'foreign.example',
    false,
    (report, bridge) => {
      assert.deepEqual(report, { opened: false });
      assert.equal(bridge.links.get(77), undefined);
      assert.ok(bridge.logs.some((l) => /refused: a browser page may not link as a computer \(Origin "http:\/\/foreign\.example:\d+"/.test(l)), bridge.logs.join('\n'));
    },
    linkPage,
    (bridge) => bridge.linkUrl,
  ));

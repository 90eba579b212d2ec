// The link protocol as the Lua program speaks it, against a fake bridge:
// hello, ping, bad frames, reconnecting, close codes and Ctrl+T.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { COLOURS, PROGRAM, useComputer } from './computer.js';
import { closedPort, startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 30000 };
const VERSION = readFileSync(PROGRAM, 'utf8').match(/^local VERSION = "([^"]+)"/m)[1];

async function fakeBridge(t, opts) {
  const bridge = await startFakeBridge(opts);
  t.after(() => bridge.close());
  return bridge;
}

/** Every frame the computer sent on a link was valid JSON. */
function assertAllJson(link) {
  assert.deepEqual(link.frames.filter((f) => 'invalidJson' in f), []);
}

// Every link test runs twice: with CC 1.101+'s http.websocketAsync (the ROM
// wrapper in rom/apis/http/http.lua, which queues websocket_failure for an
// immediate failure too) and with CC 1.100's, the native function itself,
// which only returns false and a message.
const MODES = [
  { name: 'CC 1.101+', opts: {} },
  { name: 'CC 1.100 websocketAsync', opts: { nativeAsync: true } },
];

for (const mode of MODES) {
  describeLua(`hello and ping (${mode.name})`, () => {
    test('hello carries id, label and version; status lines follow hello-ok', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, id: 12, label: 'base-turtle', url: bridge.url });
      await c.waitForOutput('waiting for requests... Press Ctrl+T to stop.\n');
      const link = await bridge.link(0);
      const { key, ...hello } = link.frames[0];
      assert.match(key, /^[A-Za-z0-9_-]{32}$/, 'its own key (mcp.key), made on this first run');
      assert.deepEqual(hello, {
        type: 'hello',
        computerId: 12,
        computerLabel: 'base-turtle',
        version: VERSION,
        maxFrame: 131072,
        kind: 'computer',
        advanced: true,
        host: 'ComputerCraft 1.109.0 (cc-emu)',
        ccVersion: '1.109.0',
        peripherals: [],
        jobs: [],
      });
      assert.equal(c.output, [
        `mcp-computer v${VERSION} connecting to ${bridge.url}`,
        'linked as 12 (Label: base-turtle)',
        'waiting for requests... Press Ctrl+T to stop.',
        '',
      ].join('\n'));
      const pong = await link.request('ping');
      assert.deepEqual(pong, { type: 'response', id: pong.id, ok: true, result: 'pong from 12 (Label: base-turtle)' });
    });

    test('the link dials the URL with its own query, after one already there (CC names websocket events by the address)', T, async (t) => {
      const bridge = await fakeBridge(t);
      const plain = useComputer(t, { ...mode.opts, id: 21, url: bridge.url });
      await plain.waitForOutput('waiting for requests');
      assert.equal((await bridge.link(0)).path, '/?mcp-computer-link');
      const queried = useComputer(t, { ...mode.opts, id: 22, url: `${bridge.url}/x?y=1` });
      await queried.waitForOutput('waiting for requests');
      assert.equal((await bridge.link(1)).path, '/x?y=1&mcp-computer-link');
      assert.match(queried.output, /connecting to ws:\/\/127\.0\.0\.1:\d+\/x\?y=1\n/, 'the URL shown is the one given');
    });

    test('no label or an empty one: computerLabel left out, pong says null', T, async (t) => {
      const bridge = await fakeBridge(t);
      for (const [i, label] of [[0, undefined], [1, '']]) {
        const c = useComputer(t, { ...mode.opts, id: 3 + i, label, url: bridge.url });
        await c.waitForOutput(`linked as ${3 + i} (Label: null)`);
        const link = await bridge.link(i);
        assert.ok(!('computerLabel' in link.frames[0]), JSON.stringify(link.frames[0]));
        assert.equal((await link.request('ping')).result, `pong from ${3 + i} (Label: null)`);
      }
    });

    test('a non-ASCII label arrives as real UTF-8 (also a Latin-1 one and on old CC)', T, async (t) => {
      const bridge = await fakeBridge(t);
      const a = useComputer(t, { ...mode.opts, id: 1, label: 'Küche ☃ 🐢', url: bridge.url });
      await a.waitForOutput('waiting for requests');
      const la = await bridge.link(0);
      assert.equal(la.frames[0].computerLabel, 'Küche ☃ 🐢');
      assert.equal((await la.request('ping')).result, 'pong from 1 (Label: Küche ☃ 🐢)');
      assert.ok(la.raw.every((text) => /^[\x20-\x7e]*$/.test(text)), 'frames are plain ASCII JSON');

      // A label holding byte 0xE9 alone (not UTF-8) is read as U+00E9, the way
      // CC's own JSON encoder reads bytes; CC before 1.106 has no unicode_strings.
      const b = useComputer(t, { ...mode.opts, id: 2, label: Buffer.from([0x63, 0x61, 0x66, 0xe9]), url: bridge.url, oldJson: true });
      await b.waitForOutput('waiting for requests');
      const lb = await bridge.link(1);
      assertAllJson(lb);
      assert.equal(lb.frames[0].computerLabel, 'café');
      assert.equal((await lb.request('ping')).result, 'pong from 2 (Label: café)');
    });

    test('unknown method: ok false, "unknown method"', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url });
      await c.waitForOutput('waiting for requests');
      const link = await bridge.link(0);
      const res = await link.request('dig-tunnel', { depth: 3 });
      assert.deepEqual(res, { type: 'response', id: res.id, ok: false, error: 'unknown method' });
    });

    test('bad frames are warned about and ignored; the link keeps working', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url });
      await c.waitForOutput('waiting for requests');
      const link = await bridge.link(0);
      const bad = [
        'this is not json',
        '{"type": "request", "id": "x", ',
        '-', // CC's decoder throws on this one instead of returning nil, message
        '[1, 2, 3]',
        '"just a string"',
        '{"no": "type"}',
        '{"type": "launch-missiles"}',
        '{"type": "request", "id": 7, "method": "ping"}',
        '{"type": "request", "method": "ping"}',
      ];
      for (const frame of bad) link.send(frame);
      const pong = await link.request('ping');
      assert.equal(pong.result, 'pong from 1 (Label: null)');
      const warnings = c.linesIn(COLOURS.yellow);
      assert.equal(warnings.length, bad.length, warnings.join('\n'));
      assert.match(warnings[0], /^warning: ignored a malformed frame \(Malformed JSON at position 1/);
      assert.match(warnings[3], /not a JSON object with a type/);
      assert.match(warnings[6], /unknown type launch-missiles/);
      assert.match(warnings[7], /request without a string id/);
      assert.equal(link.frames.filter((f) => f.type === 'response').length, 1, 'nothing answered the bad frames');
    });
  });

  describeLua(`hello failures (${mode.name})`, () => {
    test('hello-error: the reason is printed in red and the program stops', T, async (t) => {
      const bridge = await fakeBridge(t, {
        hello: (link) => {
          link.send({ type: 'hello-error', error: 'computerId must be a number' });
          link.close(1008, 'bad hello');
        },
      });
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 1 });
      const { code } = await c.waitForExit();
      assert.equal(code, 1);
      assert.deepEqual(c.linesIn(COLOURS.red), ['The bridge refused this computer: computerId must be a number']);
      assert.equal(bridge.links.length, 1, 'no reconnect after hello-error');
    });

    for (const [code, reason, said] of [
      [4410, 'pin_reset: its key is no longer trusted here; give this computer a new key (set mcp.key new), then start mcp-computer again',
        /the bridge's operator reset the pin of computer 9 \(code 4410\): its key is no longer trusted here; give this computer a new key \(set mcp\.key new\), then start mcp-computer again\n$/],
      [4403, 'not_enrolled: this bridge takes only enrolled computer ids',
        /the bridge refused this computer during the hello: not_enrolled: this bridge takes only enrolled computer ids \(code 4403\)\n$/],
      [4999, 'some later reason', /the bridge refused this computer during the hello: some later reason \(code 4999\)\n$/],
    ]) {
      test(`bug: a close ${code} during the hello (no hello-error first) was retried for ever, as if the link had only dropped`, { timeout: 60000 }, async (t) => {
        const bridge = await fakeBridge(t, { hello: (link) => link.close(code, reason) });
        const c = useComputer(t, { ...mode.opts, id: 9, url: bridge.url, timeScale: 0.005 });
        const { code: exit, output } = await c.waitForExit(20000);
        assert.equal(exit, 0);
        assert.match(output.replace(/ \n/g, ' '), said);
        assert.doesNotMatch(output, /retrying in/);
        assert.equal(bridge.links.length, 1, 'no relink after the bridge\'s final word');
      });
    }

    test('no hello-ok within 5 s: said so, then it retries', T, async (t) => {
      const bridge = await fakeBridge(t, { hello: 'none' });
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 0.005 });
      await c.waitForOutput(/no hello-ok from the bridge within 5 s\nretrying in (0\.\d+|1) s/);
      const second = await bridge.link(1);
      await second.hello;
      assert.ok((await bridge.links[0].closed), 'the first link was closed');
    });
  });

  describeLua(`link drops and reconnects (${mode.name})`, () => {
    test('the bridge drops the link: reconnect after 1 s, hello again, nothing replayed', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 0.01 });
      await c.waitForOutput('waiting for requests');
      const first = await bridge.link(0);
      // A chunk still waiting when the link goes, and a ping that is answered.
      first.send({ type: 'request', id: 'pending-chunk', method: 'exec-lua', params: { code: 'os.pullEvent("never") return 1' } });
      assert.equal((await first.request('ping')).ok, true);
      first.ws.terminate();

      const { end } = await c.waitForOutput('abandoned 1 running exec-lua chunk(s)\nlink closed: Connection closed\n');
      await c.waitForOutput(/retrying in (0\.\d+|1) s\.\.\. Press Ctrl\+T to stop\.\nreconnecting to/, 10000, end);
      await c.waitForOutput('waiting for requests', 10000, end);
      const second = await bridge.link(1);
      assert.equal((await second.request('ping')).result, 'pong from 1 (Label: null)');
      c.queueEvent('never');
      assert.equal((await second.request('ping')).ok, true);
      assert.deepEqual(second.frames.map((f) => f.type), ['hello', 'response', 'response']);
      assert.ok(!second.frames.some((f) => f.id === 'pending-chunk'), 'the old request is not replayed');
      assertAllJson(first);
      assertAllJson(second);
    });

    test('backoff starts over after a successful link', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 0.005 });
      for (let i = 0; i < 3; i += 1) {
        const link = await bridge.link(i);
        await link.hello;
        await link.waitFrame(() => true);
        link.close(1001, 'going away');
      }
      await bridge.link(3);
      // each wait from the first step (1 s), drawn from its upper half
      const delays = [...c.output.matchAll(/retrying in ([\d.]+) s/g)].map((m) => Number(m[1]));
      assert.equal(delays.length, 3);
      assert.ok(delays.every((d) => d >= 0.5 && d <= 1), String(delays));
    });

    test('close 1001 (bridge shutting down) is reported and retried', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 0.005 });
      await c.waitForOutput('waiting for requests');
      (await bridge.link(0)).close(1001, 'bridge shutting down');
      await c.waitForOutput('the bridge is shutting down: bridge shutting down (code 1001)');
      await (await bridge.link(1)).hello;
    });

    test('close in the 4000 range (link replaced): stop, do not fight the new link', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, id: 9, url: bridge.url, timeScale: 0.005 });
      await c.waitForOutput('waiting for requests');
      (await bridge.link(0)).close(4000, 'replaced by a newer link');
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /link replaced by another connection for computer 9: replaced by a newer link \(code 4000\)\n$/);
      assert.equal(bridge.links.length, 1);
    });

    test('close 4410 (the operator reset this id\'s pin): says so and stops instead of linking straight back with the key no longer trusted', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, id: 9, url: bridge.url, timeScale: 0.005 });
      await c.waitForOutput('waiting for requests');
      (await bridge.link(0)).close(4410, 'pin_reset: its key is no longer trusted here; give this computer a new key (set mcp.key new), then start mcp-computer again');
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      // one line, wrapped at the screen's width
      // what to do next is the bridge's close reason (a reset distrusts the key unless told not to)
      assert.match(output.replace(/ \n/g, ' '), /\nthe bridge's operator reset the pin of computer 9 \(code 4410\): its key is no longer trusted here; give this computer a new key \(set mcp\.key new\), then start mcp-computer again\n$/);
      assert.doesNotMatch(output, /link replaced by another connection/);
      assert.equal(bridge.links.length, 1);
    });

    test('--once: exits when the link drops', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, args: ['--once'] });
      await c.waitForOutput('waiting for requests');
      (await bridge.link(0)).close(1000, 'bye');
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /link closed: bye \(code 1000\)\n$/);
      assert.equal(bridge.links.length, 1);
    });

    test('a frame from the bridge over the size limit: 1009 to the bridge, "Could not connect" here (as CC does), then it relinks', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 0.005, maxMessage: 4096 });
      await c.waitForOutput('waiting for requests');
      const first = await bridge.link(0);
      first.send({ type: 'request', id: 'big', method: 'exec-lua', params: { code: `return "${'x'.repeat(5000)}"` } });
      assert.equal((await first.closed).code, 1009);
      await c.waitForOutput('link closed: Could not connect');
      assert.doesNotMatch(c.output, /Message is too large/);
      await (await bridge.link(1)).hello;
    });

    test('a connect that fails at once (false, message) is reported and retried, never waited on', T, async (t) => {
      const c = useComputer(t, { ...mode.opts, url: 'ws://example.invalid:3001', syncFailure: 'Unknown host', timeScale: 0.001 });
      await c.waitForOutput('reconnecting to ws://example.invalid:3001 (attempt 3)');
      c.terminate();
      assert.equal((await c.waitForExit()).code, 0);
      assert.match(c.output, /could not connect: Unknown host/);
    });

    test('CC\'s 4 websockets are all in use: "Too many websockets already open", retried, links once one is free', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 0.001, websocketsInUse: 4 });
      await c.waitForOutput('reconnecting to');
      assert.match(c.linesIn(COLOURS.red).join(' '), /could not connect: .*Too many websockets already open/);
      assert.equal(bridge.links.length, 0);
      c.terminate();
      await c.waitForExit();
      const three = useComputer(t, { ...mode.opts, url: bridge.url, websocketsInUse: 3 });
      await three.waitForOutput('waiting for requests');
    });

    test('a chunk may open 3 websockets beside the link; the 4th raises "Too many websockets already open"', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url });
      await c.waitForOutput('waiting for requests');
      const link = await bridge.link(0);
      const other = `${bridge.url}/other`;
      const res = await link.exec(`local n = 0
        for i = 1, 5 do
          local ok, err = pcall(http.websocketAsync, ${JSON.stringify(other)})
          if not ok then return n, err end
          n = n + 1
        end`);
      assert.equal(res.ok, true, JSON.stringify(res));
      assert.equal(res.result.returns[0].value, 3);
      assert.match(res.result.returns[1].value, /Too many websockets already open$/);
      assert.equal((await link.request('ping')).ok, true);
    });
  });

  describeLua(`Ctrl+T (${mode.name})`, () => {
    test('while connecting: stops, and a connect that succeeds late is closed', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url, holdConnect: true, timeScale: 1 });
      await c.waitForOutput('connecting to');
      c.terminate();
      c.releaseConnects();
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /mcp-computer stopped\.\n$/);
      const link = await bridge.link(0);
      await link.closed;
      assert.deepEqual(link.frames, [], 'no hello on a stopped connect');
    });

    test('while connecting, the connect never finishing: stops after a short grace', T, async (t) => {
      const c = useComputer(t, { ...mode.opts, url: 'ws://127.0.0.1:1', holdConnect: true, timeScale: 0.01 });
      await c.waitForOutput('connecting to');
      c.terminate();
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /mcp-computer stopped\.\n$/);
    });

    test('while connecting with the blocking http.websocket (older CC)', T, async (t) => {
      const c = useComputer(t, { ...mode.opts, url: 'ws://127.0.0.1:1', holdConnect: true, noAsync: true });
      await c.waitForOutput('connecting to');
      c.terminate();
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /mcp-computer stopped\.\n$/);
    });

    test('while waiting for hello-ok: stops and closes the socket', T, async (t) => {
      const bridge = await fakeBridge(t, { hello: 'none' });
      const c = useComputer(t, { ...mode.opts, url: bridge.url, timeScale: 1 });
      const link = await bridge.link(0);
      await link.hello;
      c.terminate();
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /mcp-computer stopped\.\n$/);
      assert.ok(await link.closed);
    });

    test('while linked: stops, closes the socket; running chunks are told', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, url: bridge.url });
      await c.waitForOutput('waiting for requests');
      const link = await bridge.link(0);
      link.send({ type: 'request', id: 'waiting', method: 'exec-lua', params: { code: 'print("before") os.pullEvent("never")' } });
      assert.equal((await link.request('ping')).ok, true);
      c.terminate();
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /waiting for requests\.\.\. Press Ctrl\+T to stop\.\nmcp-computer stopped\.\n$/);
      await link.closed;
      const res = link.frames.find((f) => f.id === 'waiting');
      assert.equal(res.ok, false);
      assert.match(res.error, /stopped \(Ctrl\+T\)/);
    });

    test('while sleeping between retries: stops', T, async (t) => {
      const port = await closedPort();
      const c = useComputer(t, { ...mode.opts, url: `ws://127.0.0.1:${port}`, timeScale: 1 });
      await c.waitForOutput(/retrying in (0\.\d+|1) s/);
      c.terminate();
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.match(output, /retrying in (0\.\d+|1) s\.\.\. Press Ctrl\+T to stop\.\nmcp-computer stopped\.\n$/);
    });
  });

  describeLua(`real screen layout (${mode.name})`, () => {
    test('on a 51x19 computer screen the status lines wrap like CC', T, async (t) => {
      const bridge = await fakeBridge(t);
      const c = useComputer(t, { ...mode.opts, id: 12, url: bridge.url, size: [51, 19], colour: false });
      await c.waitForOutput('Press Ctrl+T to stop.');
      const lines = c.output.split('\n');
      assert.ok(lines.every((l) => l.length <= 51), lines.join('\n'));
      assert.ok(lines.includes('linked as 12 (Label: null)'));
    });
  });
}

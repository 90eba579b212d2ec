// Fuzz: 2026-07-28 requests whose mirrored headers (Mcp-Method, Mcp-Name, Mcp-Param-{Name} of an
// x-mcp-header parameter) disagree with the body in every way a seeded generator finds: other
// values, case, whitespace, the =?base64?...?= sentinel (valid, broken, unpadded, of other text),
// numbers written differently, repeated headers, raw non-ASCII bytes. The invariant the revision's
// header validation exists for: a request is only ever run when every mirrored header, decoded,
// equals its body value (so an intermediary routing on the header and the bridge running the body
// never disagree), and whatever is refused is refused with 400 and -32020 under the request's id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { fuzzSeed, internalFailures, jsonRpcProblems, prng, rawHttp, requestHead } from './lib.js';

const REQUESTS = 400;
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const CONFIG = {
  tools: [
    {
      name: 'route',
      description: 'x-mcp-header parameters of every allowed type',
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          count: { type: 'integer', 'x-mcp-header': 'Count' },
          flag: { type: 'boolean', 'x-mcp-header': 'Flag' },
          where: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
        },
      },
      target: { computerId: 3 },
      lua: 'return 1',
    },
  ],
};

const b64 = (text) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
/** How a conforming client writes a value into its header (the revision's Value Encoding). */
function encode(value) {
  const text = String(value);
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(text) && !/^=\?base64\?.*\?=$/.test(text) ? text : b64(text);
}

/** A header value for `value`: mostly the right one, else one of many near misses. */
function headerFor(r, value) {
  const right = encode(value);
  switch (r.int(14)) {
    case 0:
      return right.toLowerCase() === right ? right.toUpperCase() : right.toLowerCase();
    case 1:
      return ` ${right} `;
    case 2:
      return b64(String(value)); // the sentinel even where plain would do: still equal
    case 3:
      return b64(String(value)).replace(/=+\?=$/, '?='); // unpadded base64
    case 4:
      return b64(`${value}x`);
    case 5:
      return '=?base64?***?=';
    case 6:
      return typeof value === 'number' ? r.pick([`${value}.0`, `+${value}`, `0${value}`, `${value}e0`, ` ${value}`, '0x1f', '', 'NaN']) : `${right}\t`;
    case 7:
      return typeof value === 'boolean' ? r.pick(['True', 'TRUE', '1', 'yes', '']) : '';
    case 8:
      return Buffer.from(String(value), 'utf8').toString('latin1'); // raw bytes, not encoded
    case 9:
      return right + ', ' + right; // the header twice, as node joins it
    default:
      return right;
  }
}

function modernRequest(r, i) {
  const args = {};
  if (r.chance(0.8)) args.region = r.pick(['eu-west', 'us', 'Ünïcode', ' padded ', '=?base64?literal?=', 'a, b', '', 'x'.repeat(200), 'line\nbreak']);
  if (r.chance(0.6)) args.count = r.pick([0, 42, -7, 9007199254740991, 31]);
  if (r.chance(0.5)) args.flag = r.chance(0.5);
  if (r.chance(0.4)) args.where = { zone: r.pick(['z1', 'Zürich', '']) };
  if (r.chance(0.1)) args.region = null;
  const name = r.chance(0.9) ? 'route' : r.pick(['Route', 'probe-computers', 'r\u00f6ute']);
  const body = { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name, arguments: args, _meta: META } };
  const headers = { 'MCP-Protocol-Version': '2026-07-28', Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' };
  headers['Mcp-Method'] = r.chance(0.9) ? 'tools/call' : r.pick(['Tools/Call', 'tools/list', ' tools/call']);
  headers['Mcp-Name'] = r.chance(0.85) ? encode(name) : headerFor(r, name);
  const params = { Region: args.region, Count: args.count, Flag: args.flag, Zone: args.where?.zone };
  for (const [header, value] of Object.entries(params)) {
    const cased = r.chance(0.2) ? `mcp-param-${header.toUpperCase()}` : `Mcp-Param-${header}`;
    if (value === undefined || value === null) {
      if (r.chance(0.2)) headers[cased] = 'stray';
      continue;
    }
    if (r.chance(0.1)) continue; // left out although the body has a value
    headers[cased] = headerFor(r, value);
  }
  return { body: Buffer.from(JSON.stringify(body), 'utf8'), headers, args, name };
}

/**
 * The header as the bridge must read it (the test's own reading): HTTP drops the whitespace around a
 * field value (RFC 9110 OWS, which is why the revision base64-encodes padded values), then the
 * sentinel is decoded.
 */
function decoded(raw) {
  const value = raw.replace(/^[ \t]+|[ \t]+$/g, '');
  const m = /^=\?base64\?(.*)\?=$/s.exec(value);
  return m ? Buffer.from(m[1], 'base64').toString('utf8') : value;
}

test('fuzz 2026-07-28 mirrored headers: a request runs only when every Mcp-Method/Mcp-Name/Mcp-Param header equals its body value; anything else is 400 -32020 with its id', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_8);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  await withBridge({ CC_CONFIG: writeConfig(CONFIG) }, async (bridge) => {
    const ran = new Map();
    const computer = await linkComputer(bridge, {
      computerId: 3,
      onRequest: (frame) => {
        if (frame.method === 'exec-lua') ran.set(JSON.stringify(frame.params.args), (ran.get(JSON.stringify(frame.params.args)) ?? 0) + 1);
        return { ok: true, result: { output: '', returns: [{ type: 'number', value: 1 }] } };
      },
    });
    const port = Number(new URL(bridge.mcpUrl).port);
    const r = prng(seed);
    const problems = [];
    const tally = { ran: 0, invalid: 0, refused: 0, other: 0 };
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        const i = next++;
        const req = modernRequest(r, i);
        const res = await rawHttp(port, requestHead('POST', '/mcp', req.headers, req.body.length), [req.body]);
        // raw bytes that break the HTTP head (a line break) get node's own bare 400
        if (res.status === 400 && res.body === '' && res.headers['content-type'] === undefined) continue;
        let json = null;
        try {
          json = JSON.parse(res.body);
        } catch {
          problems.push(`${i}: not JSON: ${res.status} ${res.body.slice(0, 100)}`);
          continue;
        }
        for (const p of jsonRpcProblems(json)) problems.push(`${i}: ${p}`);
        if (json.id !== i) problems.push(`${i}: answered under id ${JSON.stringify(json.id)}`);
        const label = `${i} ${JSON.stringify(req.headers)} ${JSON.stringify(req.args)} => ${res.status} ${res.body.slice(0, 200)}`;
        if (res.status === 200 && json.result && req.name === 'route') {
          // passed the header checks (an isError here is the arguments' own check, after them)
          if (json.result.isError) tally.invalid++;
          else tally.ran++;
          // every mirrored header, decoded, must be its body value
          if (decoded(req.headers['Mcp-Name']) !== req.name || decoded(req.headers['Mcp-Method']) !== 'tools/call') problems.push(`ran with mismatched Mcp-Method/Mcp-Name: ${label}`);
          const byName = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
          for (const [header, value] of [['region', req.args.region], ['count', req.args.count], ['flag', req.args.flag], ['zone', req.args.where?.zone]]) {
            if (value === undefined || value === null) continue;
            const raw = byName[`mcp-param-${header}`];
            const same = raw !== undefined && (typeof value === 'number' ? Number(decoded(raw)) === value && decoded(raw).trim() !== '' : decoded(raw) === String(value));
            if (!same) problems.push(`ran with Mcp-Param-${header} ${JSON.stringify(raw)} for ${JSON.stringify(value)}: ${label}`);
          }
        } else if (res.status === 400 && json.error?.code === -32020) tally.refused++;
        else {
          tally.other++;
          // probe-computers and unknown names: their own answers, never a server failure
          if (res.status >= 500) problems.push(`server error: ${label}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    t.diagnostic(`ran: ${tally.ran}; invalid arguments: ${tally.invalid}; refused -32020: ${tally.refused}; other: ${tally.other}`);
    assert.deepEqual(problems.slice(0, 10), []);
    assert.ok(tally.ran > 0 && tally.refused > 0);
    // every run the bridge answered 200 for reached the computer once (a Lua tool runs through exec-lua)
    assert.equal([...ran.values()].reduce((a, b) => a + b, 0), tally.ran);
    assert.deepEqual(internalFailures(bridge.logs), []);
    await computer.close();
  });
});

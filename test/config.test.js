// Configuration from the environment: defaults, every rejection, and the --help text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, LOG_LEVELS, VARIABLES, helpText, loadConfig } from '../dist/config.js';

const MiB = 1024 * 1024;

/** Asserts that loadConfig rejects `value` for `variable` with a ConfigError naming both. */
function rejects(variable, value) {
  assert.throws(
    () => loadConfig({ [variable]: value }),
    (err) => {
      assert.ok(err instanceof ConfigError, `expected a ConfigError for ${variable}=${JSON.stringify(value)}, got ${err}`);
      assert.equal(err.name, 'ConfigError');
      assert.equal(err.code, 'ERR_CONFIG');
      assert.equal(err.variable, variable);
      assert.equal(err.value, value);
      assert.ok(err.message.includes(variable), err.message);
      assert.ok(err.message.includes(JSON.stringify(value)), err.message);
      assert.ok(!err.message.includes('\n'), 'one line');
      return true;
    },
  );
}

test('every variable has its documented default', () => {
  assert.deepEqual(loadConfig({}), {
    mcpHost: '127.0.0.1',
    mcpPort: 3000,
    linkHost: '0.0.0.0',
    linkPort: 3001,
    probeTimeoutMs: 2000,
    execTimeoutMs: 10000,
    heartbeatMs: 30000,
    linkRetryMs: 500,
    maxFrameBytes: MiB,
    maxIdentityBytes: 32768,
    listComputersMaxChars: 128 * MiB,
    maxBodyBytes: MiB,
    stdioHighWaterBytes: MiB,
    stdioMaxQueuedBytes: 64 * MiB,
    stdioShutdownIdleMs: 5000,
    stdioShutdownMaxMs: 60000,
    allowedOrigins: [],
    linkAllowedOrigins: [],
    execLua: true,
    execMaxCodeBytes: 65536,
    execMaxResultValues: 100000,
    logLevel: 'info',
    mcpAuthTokens: [],
    linkTokens: [],
    linkPin: true,
    linkPinStrict: false,
    linkPinsFile: null,
    sessionKeyFile: null,
    linkEnrollMs: 600000,
    linkMaxPins: 10000,
    linkPinConfirmMs: 600000,
    linkPinLabelWriteMs: 1000,
    linkPinWriteMs: 200,
    allowUnauthenticated: false,
    configFile: null,
    maxLinks: 1000,
    maxLinksPerAddress: 1000,
    maxPendingHellos: 256,
    maxPendingHellosPerAddress: 64,
    helloRate: 50,
    maxRequestsPerComputer: 128,
    maxConcurrentCalls: 1024,
    callRate: 10000,
    callBurst: 10000,
    maxFileBytes: 16 * MiB,
    maxBatch: 100,
    linkMaxBytesPerSecond: MiB,
    linkMaxUnsentBytes: 32 * MiB,
    linkYoungGenMaxBytes: 8 * MiB,
    upstreamTimeoutMs: 60000,
    upstreamMaxMessageBytes: 4 * MiB,
    maxBatch: 100,
    listTtlMs: 0,
    maxJsonDepth: 64,
    patternMaxChars: 1000,
    linkMaxJsonDepth: 64,
    sendStallMs: 30000,
    upstreamMaxJsonDepth: 64,
    upstreamRelistMs: 1000,
    maxSubscriptions: 256,
    maxSubscriptionsPerClient: 32,
    listenKeepAliveMs: 15000,
    maxGetStreams: 256,
    maxGetStreamsPerSession: 4,
    maxGetStreamsPerClient: 32,
  });
});

test('an empty value means the default', () => {
  const env = Object.fromEntries(VARIABLES.map((v) => [v.name, '']));
  assert.deepEqual(loadConfig(env), loadConfig({}));
});

test('loadConfig reads process.env when no environment is given', () => {
  const saved = process.env.MCP_PORT;
  process.env.MCP_PORT = '4321';
  try {
    assert.equal(loadConfig().mcpPort, 4321);
  } finally {
    if (saved === undefined) delete process.env.MCP_PORT;
    else process.env.MCP_PORT = saved;
  }
});

test('valid values are parsed', () => {
  const config = loadConfig({
    MCP_HOST: ' 0.0.0.0 ',
    MCP_PORT: '0',
    CC_LINK_HOST: '::',
    CC_LINK_PORT: '65535',
    CC_PROBE_TIMEOUT_MS: '1',
    CC_EXEC_TIMEOUT_MS: '300000',
    CC_HEARTBEAT_MS: '3600000',
    CC_MAX_FRAME_BYTES: '1024',
    MCP_MAX_BODY_BYTES: String(1024 * MiB),
    MCP_ALLOWED_ORIGINS: ' https://example.com , http://tools.local:8080/ ,',
    CC_EXEC_LUA: 'off',
    LOG_LEVEL: 'DEBUG',
    CC_CONFIG: '/etc/cc bridge.json',
    CC_UPSTREAM_TIMEOUT_MS: '5',
    CC_UPSTREAM_MAX_MESSAGE_BYTES: '2048',
  });
  const expected = {
    mcpHost: '0.0.0.0',
    mcpPort: 0,
    linkHost: '::',
    linkPort: 65535,
    probeTimeoutMs: 1,
    execTimeoutMs: 300000,
    heartbeatMs: 3600000,
    maxFrameBytes: 1024,
    maxBodyBytes: 1024 * MiB,
    allowedOrigins: ['https://example.com', 'http://tools.local:8080'],
    execLua: false,
    logLevel: 'debug',
    configFile: '/etc/cc bridge.json',
    upstreamTimeoutMs: 5,
    upstreamMaxMessageBytes: 2048,
  };
  // the fields this test sets; the defaults test covers every field
  for (const [key, value] of Object.entries(expected)) assert.deepEqual(config[key], value, key);
});

test('an IPv6 host may be written in brackets', () => {
  const config = loadConfig({ MCP_HOST: '[::1]', CC_LINK_HOST: ' [::] ' });
  assert.equal(config.mcpHost, '::1');
  assert.equal(config.linkHost, '::');
});

test('allowed origins are stored the way browsers send them', () => {
  assert.deepEqual(loadConfig({ MCP_ALLOWED_ORIGINS: 'HTTPS://Example.COM:443/,http://a.test:80' }).allowedOrigins, [
    'https://example.com',
    'http://a.test',
  ]);
});

test('CC_EXEC_LUA accepts the usual spellings of on and off', () => {
  for (const on of ['on', 'ON', 'true', '1', 'yes']) assert.equal(loadConfig({ CC_EXEC_LUA: on }).execLua, true, on);
  for (const off of ['off', 'Off', 'false', '0', 'no']) assert.equal(loadConfig({ CC_EXEC_LUA: off }).execLua, false, off);
});

test('every log level is accepted', () => {
  for (const level of LOG_LEVELS) assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
});

test('ports: non-numeric or out of range is a ConfigError naming variable and value', () => {
  for (const variable of ['MCP_PORT', 'CC_LINK_PORT']) {
    for (const value of ['abc', '-1', '65536', '3000x', '30.5', '1e3', '+80', '0x10', '99999999999999999999']) rejects(variable, value);
  }
});

test('timeouts: negative, zero, fractional, non-numeric or too large is a ConfigError', () => {
  for (const variable of ['CC_PROBE_TIMEOUT_MS', 'CC_EXEC_TIMEOUT_MS', 'CC_HEARTBEAT_MS', 'MCP_SEND_STALL_MS']) {
    for (const value of ['-5', '0', '1.5', 'soon']) rejects(variable, value);
  }
  rejects('CC_PROBE_TIMEOUT_MS', '3600001');
  rejects('CC_HEARTBEAT_MS', '3600001');
  rejects('MCP_SEND_STALL_MS', '3600001');
  rejects('CC_EXEC_TIMEOUT_MS', '300001');
});

test('MCP_MAX_GET_STREAMS: 0 (no GET stream) to 1000000', () => {
  assert.equal(loadConfig({ MCP_MAX_GET_STREAMS: '0' }).maxGetStreams, 0);
  assert.equal(loadConfig({ MCP_MAX_GET_STREAMS: '1000000' }).maxGetStreams, 1_000_000);
  for (const value of ['-1', '1.5', 'many', '1000001']) rejects('MCP_MAX_GET_STREAMS', value);
});

test('byte limits below 1 KiB or above 1 GiB are ConfigErrors', () => {
  for (const variable of ['CC_MAX_FRAME_BYTES', 'MCP_MAX_BODY_BYTES']) {
    for (const value of ['1023', '0', '-1', String(1024 * MiB + 1), 'lots']) rejects(variable, value);
  }
});

test('CC_MAX_IDENTITY_BYTES: 4096 to 67108864', () => {
  assert.equal(loadConfig({ CC_MAX_IDENTITY_BYTES: '4096' }).maxIdentityBytes, 4096);
  assert.equal(loadConfig({ CC_MAX_IDENTITY_BYTES: String(64 * MiB) }).maxIdentityBytes, 64 * MiB);
  for (const value of ['4095', '0', '-1', String(64 * MiB + 1), '32k']) rejects('CC_MAX_IDENTITY_BYTES', value);
});

test('hosts with spaces or slashes are ConfigErrors', () => {
  for (const variable of ['MCP_HOST', 'CC_LINK_HOST']) {
    for (const value of ['   ', 'http://127.0.0.1', 'local host', '[]', '[::1', '::1]']) rejects(variable, value);
  }
});

test('an unknown LOG_LEVEL is a ConfigError', () => {
  for (const value of ['verbose', 'trace', 'inf']) rejects('LOG_LEVEL', value);
});

test('a bad CC_EXEC_LUA is a ConfigError', () => {
  for (const value of ['maybe', '2', 'enabled']) rejects('CC_EXEC_LUA', value);
});

test('CC_EXEC_MAX_RESULT_VALUES (was a fixed 100,000): 1000 to 10000000, anything else is a ConfigError', () => {
  assert.equal(loadConfig({ CC_EXEC_MAX_RESULT_VALUES: '1000' }).execMaxResultValues, 1000);
  assert.equal(loadConfig({ CC_EXEC_MAX_RESULT_VALUES: '10000000' }).execMaxResultValues, 10_000_000);
  for (const value of ['999', '10000001', '0', '-5', '1e5', 'many']) rejects('CC_EXEC_MAX_RESULT_VALUES', value);
});

test('an origin that is not scheme://host[:port] is a ConfigError', () => {
  for (const value of [
    'example.com',
    '*',
    'null',
    'https://example.com/path',
    'https://example.com?x=1',
    'https://example.com#top',
    'https://user:pw@example.com',
    'https://user@example.com',
    'https://example.com?',
    'https://example.com#',
    'https://:pw@example.com',
    'ftp://example.com',
    'https://ok.example, not an origin',
  ]) {
    rejects('MCP_ALLOWED_ORIGINS', value);
  }
});

test('help text lists every variable with its default and meaning', () => {
  const text = helpText('node index.js');
  assert.match(text, /^Usage: node index\.js/);
  const expected = {
    MCP_HOST: '127.0.0.1',
    MCP_PORT: '3000',
    CC_LINK_HOST: '0.0.0.0',
    CC_LINK_PORT: '3001',
    CC_PROBE_TIMEOUT_MS: '2000',
    CC_EXEC_TIMEOUT_MS: '10000',
    CC_HEARTBEAT_MS: '30000',
    CC_MAX_FRAME_BYTES: String(MiB),
    MCP_MAX_BODY_BYTES: String(MiB),
    MCP_STDIO_HIGH_WATER_BYTES: String(MiB),
    MCP_STDIO_MAX_QUEUED_BYTES: String(64 * MiB),
    MCP_STDIO_SHUTDOWN_IDLE_MS: '5000',
    MCP_STDIO_SHUTDOWN_MAX_MS: '60000',
    MCP_ALLOWED_ORIGINS: 'empty',
    CC_LINK_ALLOWED_ORIGINS: 'empty',
    CC_EXEC_LUA: 'on',
    CC_EXEC_MAX_CODE_BYTES: '65536',
    CC_EXEC_MAX_RESULT_VALUES: '100000',
    LOG_LEVEL: 'info',
    MCP_AUTH_TOKEN: 'empty',
    MCP_AUTH_TOKEN_FILE: 'empty',
    CC_LINK_TOKEN: 'empty',
    CC_LINK_TOKEN_FILE: 'empty',
    CC_MAX_FILE_BYTES: String(16 * MiB),
    MCP_ALLOW_UNAUTHENTICATED: 'off',
    CC_CONFIG: 'empty',
    CC_MAX_LINKS: '1000',
    CC_MAX_LINKS_PER_ADDRESS: '1000',
    CC_MAX_PENDING_HELLOS: '256',
    CC_MAX_PENDING_HELLOS_PER_ADDRESS: '64',
    CC_HELLO_RATE: '50',
    CC_MAX_REQUESTS_PER_COMPUTER: '128',
    MCP_MAX_CONCURRENT_CALLS: '1024',
    MCP_CALL_RATE: '10000',
    MCP_CALL_BURST: '10000',
    MCP_MAX_BATCH: '100',
    CC_LINK_MAX_BYTES_PER_S: String(MiB),
    CC_LINK_MAX_UNSENT_BYTES: String(32 * MiB),
    CC_LINK_YOUNG_GEN_MB: '8',
    CC_UPSTREAM_TIMEOUT_MS: '60000',
    CC_UPSTREAM_MAX_MESSAGE_BYTES: String(4 * MiB),
    MCP_MAX_BATCH: '100',
    MCP_LIST_TTL_MS: '0',
    MCP_MAX_JSON_DEPTH: '64',
    MCP_PATTERN_MAX_CHARS: '1000',
    CC_MAX_JSON_DEPTH: '64',
    MCP_SEND_STALL_MS: '30000',
    CC_UPSTREAM_MAX_JSON_DEPTH: '64',
    CC_UPSTREAM_RELIST_MS: '1000',
    MCP_MAX_SUBSCRIPTIONS: '256',
    MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: '32',
    MCP_LISTEN_KEEPALIVE_MS: '15000',
    MCP_MAX_GET_STREAMS: '256',
    MCP_MAX_GET_STREAMS_PER_SESSION: '4',
    MCP_MAX_GET_STREAMS_PER_CLIENT: '32',
    MCP_SESSION_KEY_FILE: 'empty',
    CC_LINK_RETRY_MS: '500',
    CC_LINK_PIN: 'on',
    CC_LINK_PINS_FILE: 'empty',
    CC_LINK_ENROLL_MS: '600000',
    CC_LINK_MAX_PINS: '10000',
    CC_MAX_IDENTITY_BYTES: '32768',
    CC_LINK_PIN_CONFIRM_MS: '600000',
    CC_LINK_PIN_LABEL_WRITE_MS: '1000',
    CC_LINK_PIN_WRITE_MS: '200',
    MCP_LIST_COMPUTERS_MAX_CHARS: '134217728',
  };
  assert.deepEqual(VARIABLES.map((v) => v.name).sort(), Object.keys(expected).sort());
  const lines = text.split('\n');
  for (const spec of VARIABLES) {
    const line = lines.find((l) => l.trim().startsWith(spec.name + ' '));
    assert.ok(line, `no help line for ${spec.name}`);
    assert.ok(line.includes(`[${expected[spec.name]}]`), `default of ${spec.name} missing: ${line}`);
    assert.ok(spec.meaning.length > 10 && line.includes(spec.meaning), `meaning of ${spec.name} missing: ${line}`);
  }
  for (const level of LOG_LEVELS) assert.ok(text.includes(level));
});

const TOKEN = 't'.repeat(24);

test('tokens: inline lists (rotation), files (one per line), never both, never echoed', () => {
  assert.deepEqual(loadConfig({ MCP_AUTH_TOKEN: `${TOKEN},${TOKEN}2` }).mcpAuthTokens, [TOKEN, `${TOKEN}2`]);
  assert.deepEqual(loadConfig({ CC_LINK_TOKEN: TOKEN }).linkTokens, [TOKEN]);
  const files = { '/secret/mcp': `${TOKEN}\n${TOKEN}x\n`, '/secret/empty': '\n' };
  const readFile = (path) => {
    if (path in files) return files[path];
    throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
  };
  assert.deepEqual(loadConfig({ MCP_AUTH_TOKEN_FILE: '/secret/mcp' }, readFile).mcpAuthTokens, [TOKEN, `${TOKEN}x`]);
  assert.deepEqual(loadConfig({ CC_LINK_TOKEN_FILE: '/secret/mcp' }, readFile).linkTokens, [TOKEN, `${TOKEN}x`]);
  const fails = (env, variable, pattern) =>
    assert.throws(
      () => loadConfig(env, readFile),
      (err) => err instanceof ConfigError && err.variable === variable && pattern.test(err.message) && !err.message.includes('short-token'),
    );
  fails({ MCP_AUTH_TOKEN: TOKEN, MCP_AUTH_TOKEN_FILE: '/secret/mcp' }, 'MCP_AUTH_TOKEN_FILE', /not both/);
  fails({ MCP_AUTH_TOKEN_FILE: '/secret/missing' }, 'MCP_AUTH_TOKEN_FILE', /cannot read the file \(ENOENT\)/);
  fails({ CC_LINK_TOKEN_FILE: '/secret/empty' }, 'CC_LINK_TOKEN_FILE', /holds no token/);
  fails({ MCP_AUTH_TOKEN: 'short-token' }, 'MCP_AUTH_TOKEN', /at least 16/);
  fails({ CC_LINK_TOKEN: `${TOKEN},short-token` }, 'CC_LINK_TOKEN', /<hidden>.*at least 16/);
});

test('bug: MCP_AUTH_TOKEN="," (separators only) turned authentication off without a word', () => {
  for (const value of [',', ' , ', '\n', ',,\t']) {
    for (const variable of ['MCP_AUTH_TOKEN', 'CC_LINK_TOKEN']) {
      assert.throws(
        () => loadConfig({ [variable]: value }),
        (err) => err instanceof ConfigError && err.variable === variable && /holds no token, only separators/.test(err.message),
        `${variable}=${JSON.stringify(value)}`,
      );
    }
  }
  assert.deepEqual(loadConfig({ MCP_AUTH_TOKEN: '' }).mcpAuthTokens, []);
  assert.deepEqual(loadConfig({ MCP_AUTH_TOKEN: ` ${TOKEN}, ` }).mcpAuthTokens, [TOKEN]);
});

test('tokens are read from real files by default', async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'cc-token-'));
  writeFileSync(join(dir, 't'), `${TOKEN}\n`);
  assert.deepEqual(loadConfig({ MCP_AUTH_TOKEN_FILE: join(dir, 't') }).mcpAuthTokens, [TOKEN]);
});

test('MCP_STDIO_SHUTDOWN_IDLE_MS and MCP_STDIO_SHUTDOWN_MAX_MS: defaults 5000 and 60000, whole numbers in range or a clear error', () => {
  const config = loadConfig({});
  assert.equal(config.stdioShutdownIdleMs, 5000);
  assert.equal(config.stdioShutdownMaxMs, 60000);
  assert.equal(loadConfig({ MCP_STDIO_SHUTDOWN_IDLE_MS: '100', MCP_STDIO_SHUTDOWN_MAX_MS: '86400000' }).stdioShutdownMaxMs, 86400000);
  assert.throws(() => loadConfig({ MCP_STDIO_SHUTDOWN_IDLE_MS: '99' }), (err) => err instanceof ConfigError && /MCP_STDIO_SHUTDOWN_IDLE_MS/.test(err.message));
  assert.throws(() => loadConfig({ MCP_STDIO_SHUTDOWN_MAX_MS: '5s' }), (err) => err instanceof ConfigError && /MCP_STDIO_SHUTDOWN_MAX_MS/.test(err.message));
});

test('MCP_STDIO_MAX_QUEUED_BYTES: default 64 MiB, 1 MiB to 4 GiB or a clear error', () => {
  assert.equal(loadConfig({}).stdioMaxQueuedBytes, 64 * MiB);
  assert.equal(loadConfig({ MCP_STDIO_MAX_QUEUED_BYTES: String(MiB) }).stdioMaxQueuedBytes, MiB);
  assert.equal(loadConfig({ MCP_STDIO_MAX_QUEUED_BYTES: String(4096 * MiB) }).stdioMaxQueuedBytes, 4096 * MiB);
  for (const raw of [String(MiB - 1), String(4096 * MiB + 1), '64M']) {
    assert.throws(() => loadConfig({ MCP_STDIO_MAX_QUEUED_BYTES: raw }), (err) => err instanceof ConfigError && /MCP_STDIO_MAX_QUEUED_BYTES.*from 1048576 to 4294967296/.test(err.message));
  }
});

// CC:Tweaked queues at most 256 events per computer (ComputerExecutor's queue limit) and drops the
// rest without a word; every request in flight is a websocket_message event there, next to the
// program's own timers and pacing events and whatever its exec-lua chunks wait for.
test('bug: CC_MAX_REQUESTS_PER_COMPUTER defaulted to 256, all of CC\'s event queue, so a full burst of requests and one timer lost a request (it only timed out)', () => {
  const CC_EVENT_QUEUE = 256;
  const { maxRequestsPerComputer } = loadConfig({});
  assert.ok(maxRequestsPerComputer <= CC_EVENT_QUEUE / 2, `default ${maxRequestsPerComputer}: leave at least half of CC's queue to the program's own events`);
  assert.ok(maxRequestsPerComputer >= 100, `default ${maxRequestsPerComputer}: the bench (C=100 at one computer) must fit`);
});

test('every whole-number variable takes exactly its range: its least and greatest value, not one past either', () => {
  const GiB = 1024 * MiB;
  const ranges = {
    MCP_PORT: [0, 65535], CC_LINK_PORT: [0, 65535],
    CC_PROBE_TIMEOUT_MS: [1, 3_600_000], CC_EXEC_TIMEOUT_MS: [1, 300_000], CC_HEARTBEAT_MS: [1, 3_600_000],
    CC_LINK_RETRY_MS: [0, 3_600_000], CC_MAX_FRAME_BYTES: [1024, GiB], CC_MAX_IDENTITY_BYTES: [4096, 64 * MiB],
    MCP_LIST_COMPUTERS_MAX_CHARS: [65536, 256 * MiB], MCP_MAX_BODY_BYTES: [1024, GiB], MCP_STDIO_HIGH_WATER_BYTES: [1024, GiB],
    MCP_STDIO_SHUTDOWN_IDLE_MS: [100, 3_600_000], MCP_STDIO_SHUTDOWN_MAX_MS: [1000, 86_400_000],
    CC_EXEC_MAX_CODE_BYTES: [1024, MiB], CC_EXEC_MAX_RESULT_VALUES: [1000, 10_000_000],
    CC_LINK_ENROLL_MS: [1000, 86_400_000], CC_LINK_MAX_PINS: [1, 1_000_000], CC_LINK_PIN_CONFIRM_MS: [1000, 86_400_000],
    CC_LINK_PIN_LABEL_WRITE_MS: [100, 3_600_000], CC_LINK_PIN_WRITE_MS: [0, 2000],
    CC_MAX_LINKS: [1, 1_000_000], CC_MAX_LINKS_PER_ADDRESS: [1, 1_000_000], CC_MAX_PENDING_HELLOS: [1, 1_000_000],
    CC_MAX_PENDING_HELLOS_PER_ADDRESS: [1, 1_000_000], CC_HELLO_RATE: [1, 1_000_000], CC_MAX_REQUESTS_PER_COMPUTER: [1, 1_000_000],
    MCP_MAX_CONCURRENT_CALLS: [1, 1_000_000], MCP_CALL_RATE: [1, 1_000_000], MCP_CALL_BURST: [1, 1_000_000], MCP_MAX_BATCH: [1, 1_000_000], CC_LINK_MAX_BYTES_PER_S: [1024, GiB],
    CC_LINK_MAX_UNSENT_BYTES: [MiB, GiB],
    CC_LINK_YOUNG_GEN_MB: [0, 1024], CC_UPSTREAM_TIMEOUT_MS: [1, 3_600_000], CC_UPSTREAM_MAX_MESSAGE_BYTES: [1024, GiB],
    MCP_LIST_TTL_MS: [0, 86_400_000], MCP_MAX_JSON_DEPTH: [2, 1000], MCP_PATTERN_MAX_CHARS: [1, 1_000_000],
    CC_MAX_JSON_DEPTH: [8, 1000], CC_MAX_FILE_BYTES: [1024, GiB], MCP_SEND_STALL_MS: [1, 3_600_000],
    CC_UPSTREAM_MAX_JSON_DEPTH: [8, 1000], CC_UPSTREAM_RELIST_MS: [0, 3_600_000], MCP_MAX_SUBSCRIPTIONS: [1, 100_000], MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: [1, 100_000],
    MCP_LISTEN_KEEPALIVE_MS: [0, 3_600_000], MCP_MAX_GET_STREAMS: [0, 1_000_000], MCP_MAX_GET_STREAMS_PER_SESSION: [1, 1_000_000],
    MCP_MAX_GET_STREAMS_PER_CLIENT: [1, 1_000_000], MCP_STDIO_MAX_QUEUED_BYTES: [MiB, 4096 * MiB],
  };
  // this list is written out by hand, apart from the spec it checks: every whole-number variable is in it
  assert.deepEqual(VARIABLES.filter((v) => 'min' in v).map((v) => v.name).sort(), Object.keys(ranges).sort());
  for (const spec of VARIABLES.filter((v) => 'min' in v)) assert.deepEqual([spec.min, spec.max], ranges[spec.name], spec.name);
  for (const [variable, [min, max]] of Object.entries(ranges)) {
    assert.ok(VARIABLES.some((v) => v.name === variable), `${variable} is a variable`);
    for (const value of [min, max]) assert.doesNotThrow(() => loadConfig({ [variable]: String(value) }), `${variable}=${value}`);
    if (min > 0) rejects(variable, String(min - 1));
    rejects(variable, String(max + 1));
  }
});

test('the range --help prints for each whole-number variable is the one loadConfig enforces, with the same error', () => {
  const lines = helpText('node index.js').split('\n');
  for (const spec of VARIABLES.filter((v) => 'min' in v)) {
    const line = lines.find((l) => l.trim().startsWith(spec.name + ' '));
    assert.ok(line.endsWith(` (${spec.min} to ${spec.max}) [${spec.default}]`), line);
    for (const value of [spec.min, spec.max]) assert.doesNotThrow(() => loadConfig({ [spec.name]: String(value) }), `${spec.name}=${value}`);
    for (const value of [...(spec.min > 0 ? [spec.min - 1] : []), spec.max + 1, 'x']) {
      rejects(spec.name, String(value));
      assert.throws(() => loadConfig({ [spec.name]: String(value) }), { message: `${spec.name}=${JSON.stringify(String(value))}: expected a whole number from ${spec.min} to ${spec.max}` });
    }
  }
});

test('the words --help prints for each word variable are the ones loadConfig takes, any case; any other is a ConfigError listing them', () => {
  const lines = helpText('node index.js').split('\n');
  const said = { CC_EXEC_LUA: 'on or off', MCP_ALLOW_UNAUTHENTICATED: 'on or off', CC_LINK_PIN: 'on, off or strict', LOG_LEVEL: 'one of debug, info, warn, error, silent' };
  const words = VARIABLES.filter((v) => 'values' in v);
  assert.deepEqual(words.map((v) => v.name).sort(), Object.keys(said).sort());
  for (const spec of words) {
    const line = lines.find((l) => l.trim().startsWith(spec.name + ' '));
    assert.ok(line.endsWith(` (${said[spec.name]}) [${spec.default}]`), line);
    // CC_LINK_PIN=strict alone is refused (it needs a pins file): give it one
    const env = (value) => ({ [spec.name]: value, ...(spec.name === 'CC_LINK_PIN' && value.toLowerCase() === 'strict' ? { CC_LINK_PINS_FILE: '/nonexistent/pins' } : {}) });
    for (const value of spec.values) {
      assert.doesNotThrow(() => loadConfig(env(value)), `${spec.name}=${value}`);
      assert.doesNotThrow(() => loadConfig(env(value.toUpperCase())), `${spec.name}=${value.toUpperCase()}`);
    }
    rejects(spec.name, 'sometimes');
    assert.throws(() => loadConfig({ [spec.name]: 'sometimes' }), { message: `${spec.name}="sometimes": expected ${said[spec.name]}` });
  }
});

test('variables that are free text (hosts, origins, paths, tokens) print no range', () => {
  const lines = helpText('node index.js').split('\n');
  for (const spec of VARIABLES.filter((v) => !('min' in v) && !('values' in v))) {
    assert.doesNotMatch(spec.default, /^\d+$/, spec.name);
    const line = lines.find((l) => l.trim().startsWith(spec.name + ' '));
    assert.ok(line.endsWith(`${spec.meaning} [${spec.default === '' ? 'empty' : spec.default}]`), line);
  }
});

test('CC_LINK_PIN takes strict in any case, as on and off; a blank CC_LINK_PINS_FILE, CC_CONFIG or MCP_SESSION_KEY_FILE is unset', () => {
  for (const raw of ['strict', 'STRICT', ' Strict ']) assert.equal(loadConfig({ CC_LINK_PIN: raw, CC_LINK_PINS_FILE: '/tmp/pins' }).linkPinStrict, true, raw);
  const blank = loadConfig({ CC_LINK_PINS_FILE: '   ', CC_CONFIG: ' ', MCP_SESSION_KEY_FILE: '\t' });
  assert.equal(blank.linkPinsFile, null);
  assert.equal(blank.configFile, null);
  assert.equal(blank.sessionKeyFile, null);
});

#!/usr/bin/env node
// Process entry: configuration from the environment, both listeners, signals.
import { basename, relative } from 'node:path';
import { startBridge, packageVersion } from './bridge.js';
import { ConfigError, helpText, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { checkExposure } from './exposure.js';

const EXIT_CONFIG = 2;
const SHUTDOWN_DEADLINE_MS = 5000;

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'the port needs privileges we do not have',
  EADDRNOTAVAIL: 'the address is not an address of this machine',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name cannot be resolved right now',
};

/** The listeners a failed listen or lookup may be: MCP's (when it runs) and the link's. */
interface Listeners {
  mcp: { host: string; port: number } | null;
  link: { host: string; port: number };
}

/**
 * What to change for a listener that cannot start, naming its variable; '' when the error does not
 * say which listener it was (both on one host and port). Before, the line named the address alone,
 * and a user who had not set MCP_PORT or CC_LINK_PORT had to guess which one to change.
 */
function listenHint(e: NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string }, listeners: Listeners): string {
  const lookup = e.hostname !== undefined;
  const matches = (l: { host: string; port: number } | null) =>
    l !== null && (lookup ? l.host === e.hostname : e.port !== undefined ? l.port === e.port : l.host === e.address);
  const which = [matches(listeners.mcp) ? 'MCP' : null, matches(listeners.link) ? 'CC_LINK' : null].filter((w) => w !== null);
  if (which.length !== 1) return '';
  const prefix = which[0];
  switch (e.code) {
    case 'EADDRINUSE':
      return `; another process holds that port (another cc-mcp-bridge?): stop it, or set ${prefix}_PORT to a free port (0 picks one)`;
    case 'EACCES':
      return `; ports below 1024 need privileges: set ${prefix}_PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `; set ${prefix}_HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for every address)`;
    default:
      return `; check ${prefix}_HOST`;
  }
}

/** One clear line (no stack) for a listener that cannot start, with what to change; null for any other error. */
function listenFailure(err: unknown, listeners: Listeners): string | null {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  const what = LISTEN_FAILURES[String(e.code)];
  if (what === undefined) return null;
  // listen errors carry address (and port unless it was 0); lookup errors carry hostname
  const where = `${e.address ?? e.hostname}${e.port === undefined ? '' : `:${e.port}`}`;
  return `cc-mcp-bridge: cannot listen on ${where}: ${what} (${e.code})${listenHint(e, listeners)}\n`;
}

/**
 * How the user started the bridge, for --help's usage line: an installed command by its name
 * (`cc-mcp-bridge`, npx's bin link), the script by its path from here (`node dist/index.js`, what
 * README has one type in a checkout). Before, `node index.js`, which works from no folder a user is in.
 */
function programName(script: string, cwd: string): string {
  const name = basename(script);
  if (!/\.[cm]?js$/.test(name)) return name;
  const shown = relative(cwd, script);
  return `node ${shown === '' || shown.startsWith('..') ? script : shown}`;
}

async function main(argv: string[]): Promise<number | null> {
  // stderr gone (a --stdio host that quit closes all three pipes): the log is lost, nothing else; an
  // unhandled EPIPE here used to crash the bridge (exit 1) before its calls were cancelled
  process.stderr.on('error', () => {});
  // stdout gone outside --stdio (`--help | head -0`, a service whose output pipe closed): the address
  // lines are lost, nothing else; an unhandled EPIPE used to crash the bridge (exit 1). Under --stdio
  // stdout is the MCP stream: its own listener (stdio-host.ts) takes the host's leaving
  if (!argv.includes('--stdio') || argv.includes('--help') || argv.includes('-h') || argv.includes('--version')) process.stdout.on('error', () => {});
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText(programName(process.argv[1] as string, process.cwd())));
    return 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`cc-mcp-bridge ${packageVersion()}\n`);
    return 0;
  }
  // --stdio: MCP over stdin/stdout (one JSON message per line); stdout carries nothing else
  const stdio = argv.includes('--stdio');
  const rest = argv.filter((a) => a !== '--stdio');
  const unknown = rest.find((a) => a.startsWith('-'));
  if (unknown || rest.length > 0) {
    process.stderr.write(`cc-mcp-bridge: unknown argument ${JSON.stringify(unknown ?? argv[0])}; see --help\n`);
    return EXIT_CONFIG;
  }

  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`cc-mcp-bridge: invalid configuration: ${err.message}\n`);
      return EXIT_CONFIG;
    }
    throw err;
  }
  // in stdio mode the HTTP listener (MCP, REST, /health) runs only when MCP_PORT asks for it; an
  // empty MCP_PORT is unset, as loadConfig reads every variable
  const http = !stdio || (process.env.MCP_PORT ?? '') !== '';
  const exposure = checkExposure(config, { http });
  if (exposure.fatal) {
    process.stderr.write(`cc-mcp-bridge: ${exposure.fatal}\n`);
    return EXIT_CONFIG;
  }
  const log = createLogger(config.logLevel);
  // whatever else might print (a stray console.log) must not corrupt the message stream
  if (stdio) console.log = console.info = console.debug = console.error;
  const say = (text: string) => (stdio ? process.stderr : process.stdout).write(text);

  let bridge;
  try {
    // a stdio bridge whose link port is taken waits for it (CC_LINK_RETRY_MS); a service fails fast
    // its warning is said after the banner and address lines below
    bridge = await startBridge(config, log, { http, linkRetryMs: stdio ? config.linkRetryMs : 0, quietLinkWait: true });
  } catch (err) {
    // only a config file can be invalid; its module is loaded already when there is one
    if (config.configFile !== null && err instanceof (await import('./config/file.js')).ConfigFileError) {
      process.stderr.write(`cc-mcp-bridge: invalid configuration file:\n${err.message}\n`);
      return EXIT_CONFIG;
    }
    // PinsFileError (its module is loaded only with CC_LINK_PINS_FILE)
    if ((err as { code?: unknown }).code === 'ERR_PINS_FILE') {
      // never run unpinned because the pins could not be read
      process.stderr.write(`cc-mcp-bridge: invalid pins file: ${(err as Error).message}\n`);
      return EXIT_CONFIG;
    }
    // SessionKeyFileError (its module is loaded only with MCP_SESSION_KEY_FILE): never a fresh key instead
    if ((err as { code?: unknown }).code === 'ERR_SESSION_KEY_FILE') {
      process.stderr.write(`cc-mcp-bridge: invalid session key file: ${(err as Error).message}\n`);
      return EXIT_CONFIG;
    }
    const line = listenFailure(err, { mcp: http ? { host: config.mcpHost, port: config.mcpPort } : null, link: { host: config.linkHost, port: config.linkPort } });
    if (line === null) throw err;
    process.stderr.write(line);
    return 1;
  }
  // signal handlers before the address lines: whoever reads them may signal at once
  let stopping = false;
  /** --stdio, once stdin is served: the shutdown that hands stdout's answers to the host. */
  let stopStdio: ((signal: string) => void) | null = null;
  const stop = (signal: string) => {
    if (stopping) {
      log.info(`${signal}; already shutting down (at most ${stopStdio ? `${config.stdioShutdownMaxMs / 1000} s, MCP_STDIO_SHUTDOWN_MAX_MS` : `${SHUTDOWN_DEADLINE_MS / 1000} s`})`);
      return;
    }
    stopping = true;
    log.info(`${signal}; shutting down`);
    if (stopStdio) return stopStdio(signal);
    const deadline = setTimeout(() => {
      log.warn('shutdown took too long; exiting');
      process.exit(0);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    bridge
      .close(SHUTDOWN_DEADLINE_MS - 1000)
      .then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT received'));
  process.on('SIGTERM', () => stop('SIGTERM received'));
  process.on('SIGHUP', () => {
    // re-read CC_CONFIG; the hub logs what changed, or why the file was refused
    if (!bridge.hub) log.warn('SIGHUP received; the bridge runs without CC_CONFIG, so there is nothing to reload');
    else if (bridge.hub.reload().ok) log.info('SIGHUP received; config file reloaded');
  });

  say(`cc-mcp-bridge ${packageVersion()}\n`);
  if (stdio) say(`MCP over stdio (one JSON message per line)${bridge.mcpUrl ? `; also over HTTP at ${bridge.mcpUrl}` : ''}\n`);
  else say(`MCP endpoint: ${bridge.mcpUrl}\n`);
  const linkPort = new URL(bridge.linkUrl).port;
  const dial = config.linkHost === '0.0.0.0' || config.linkHost === '::' ? `<this machine's LAN address>:${linkPort}` : new URL(bridge.linkUrl).host;
  const waiting = bridge.linkStatus().state === 'waiting' ? '; not listening yet: the port is in use by another process, taken over when it frees' : '';
  say(`Computer link: ${bridge.linkUrl} (in game: mcp-computer ws://${dial}, program at http://${dial}/mcp-computer.lua${waiting})\n`);
  bridge.announceLink();
  if (stdio) {
    // loaded only in stdio mode; stdin is not read until serveStdio, so nothing sent meanwhile is lost
    const [{ serveStdio }, { shutdownClock, expiryMessage, cutOffReason }, { addStdioGauges }] = await Promise.all([import('./surfaces/stdio.js'), import('./surfaces/stdio-shutdown.js'), import('./surfaces/stdio-surface.js')]);
    const surface = serveStdio({
      input: process.stdin,
      output: process.stdout,
      dispatcher: bridge.dispatcher,
      log,
      maxLineBytes: config.maxBodyBytes,
      onToolsChanged: (listener) => bridge.tools.watch(listener),
      highWaterBytes: config.stdioHighWaterBytes,
      maxQueuedBytes: config.stdioMaxQueuedBytes,
    });
    addStdioGauges(bridge.metrics, surface);
    // the shutdown's clock starts at EOF or at the first signal, whichever is first: the host may
    // still be reading the answers (MCP_STDIO_SHUTDOWN_IDLE_MS, MCP_STDIO_SHUTDOWN_MAX_MS)
    const bounds = { idleMs: config.stdioShutdownIdleMs, maxMs: config.stdioShutdownMaxMs };
    let clock: { limit(): void } | null = null;
    const startClock = () =>
      (clock ??= shutdownClock(process.stdout, bounds, (why, unsent) => {
        // the requests still running get a clear answer (written now if stdout takes it) and their
        // calls are cancelled (cancel frames go out) before the exit
        const cut = surface.cutOff(cutOffReason(why, unsent, bounds));
        log.warn(`${expiryMessage(why, unsent, bounds)}${cut > 0 ? `; ${cut} request(s) still running answered -32003 and cancelled` : ''}; exiting`);
        if (why === 'idle' && unsent === 0 && cut > 0) {
          // the host takes what is written and only calls held the exit: now cancelled, they end and
          // the shutdown goes on as at any end (links closed with 1001, stdout flushed); one that
          // hangs costs at most one more MCP_STDIO_SHUTDOWN_IDLE_MS
          setTimeout(() => process.exit(0), bounds.idleMs);
          return;
        }
        // one turn first: link sockets are uncorked in a setImmediate queued before this one, so the
        // cancel frames are handed to the kernel before the exit
        setImmediate(() => process.exit(0));
      }));
    void surface.inputEnded.then(startClock);
    // the calls in flight at EOF may finish, but one that hangs must not hold the exit: from here any
    // time without a byte taken counts
    void surface.allRun.then(() => startClock().limit());
    stopStdio = (signal) => {
      // at a signal the lines read and not run are refused at once: nothing is left to run
      startClock().limit();
      // stdin is no longer read and the requests read are answered; what stdout then holds (those
      // answers, the subscriptions' final ones) is handed to the host before exiting
      void Promise.all([surface.shutdown(signal), bridge.close(SHUTDOWN_DEADLINE_MS - 1000)])
        .then(stdoutFlushed)
        .then(() => process.exit(0));
    };
    void surface.ended.then(() => stop('end of input on stdin'));
    // the host closed stdout (or quit): its calls are cancelled already; nothing is left to hand over
    void surface.hostGone.then((code) => {
      hostGone = true;
      stop(`the host no longer reads stdout (${code})`);
    });
  }

  // after the address lines, so they are the last thing an operator sees
  for (const warning of exposure.warnings) process.stderr.write(`cc-mcp-bridge: ${warning}\n`);

  return null;
}

/** --stdio: the host no longer reads stdout. */
let hostGone = false;

/** Resolves once everything written to stdout has been taken by its reader (or cannot be any more). */
function stdoutFlushed(): Promise<void> {
  if (hostGone || process.stdout.destroyed || process.stdout.writableLength === 0) return Promise.resolve();
  // an empty write's callback runs after every earlier write has gone out (or failed)
  return new Promise((resolve) => process.stdout.write('', () => resolve()));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`cc-mcp-bridge: ${err.stack ?? err.message}\n`);
    process.exitCode = 1;
  },
);

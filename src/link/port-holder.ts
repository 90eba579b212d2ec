// The link listener of a bridge that may wait for its port (--stdio): when another process holds
// CC_LINK_PORT, MCP keeps being served with no computers while this tries the port again every
// CC_LINK_RETRY_MS, and listens as soon as it is free (computers reconnect by themselves). Any other
// listen error, or retryMs 0, is thrown at once as before.
import type { Logger } from '../log.js';
import type { LinkServer } from './server.js';

export type LinkListenerState = 'listening' | 'waiting' | 'closed';

export interface LinkListenerStatus {
  state: LinkListenerState;
  /** host:port asked for (the bound port once listening). */
  address: string;
  /** While waiting: why, as tools say it; the retry interval and when waiting began. */
  reason?: string;
  retryMs?: number;
  waitingSince?: string;
}

export interface LinkPortHolder {
  /** The listener once it is up; null while waiting (and after close). */
  readonly server: LinkServer | null;
  status(): LinkListenerStatus;
  /** Stops retrying (no timer is left) and closes the listener if it is up. */
  close(): Promise<void>;
  /** Logs the waiting warning if the port is still awaited and it was held back (HoldOptions.quiet). */
  announce(): void;
}

export interface HoldOptions {
  host: string;
  port: number;
  /** 0: a taken port is thrown like any other listen error. */
  retryMs: number;
  log: Logger;
  /** Told the reason tools should give while waiting, and null once listening (or closed). */
  onUnreachable(reason: string | null): void;
  /** Hold the waiting warning back until announce() (the process entry says it after its banner). */
  quiet?: boolean;
}

const isInUse = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE';

export function every(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function holdLinkPort(start: () => Promise<LinkServer>, options: HoldOptions): Promise<LinkPortHolder> {
  const { log, retryMs } = options;
  const wanted = hostPort(options.host, options.port);
  let server: LinkServer | null = null;
  try {
    server = await start();
  } catch (err) {
    if (!isInUse(err) || retryMs <= 0) throw err;
  }
  let state: LinkListenerState = server ? 'listening' : 'waiting';
  let timer: NodeJS.Timeout | null = null;
  /** A listen attempt under way: close() waits for it so a late success does not stay open. */
  let attempt: Promise<void> | null = null;
  let lastProblem = '';
  const since = new Date().toISOString();
  const reason = `the link port ${wanted} is in use by another process (another cc-mcp-bridge?); this bridge takes it over when it frees (retrying every ${every(retryMs)})`;

  const retry = () => {
    timer = null;
    attempt = start().then(
      (up) => {
        attempt = null;
        if (state === 'closed') return up.close();
        server = up;
        state = 'listening';
        options.onUnreachable(null);
        // a warning like the one that said it was waiting: an operator at LOG_LEVEL=warn sees both
        log.warn(`the link port ${hostPort(options.host, up.address.port)} is free again: listening on it now; computers reconnect by themselves`);
      },
      (err: NodeJS.ErrnoException) => {
        attempt = null;
        if (state === 'closed') return;
        if (!isInUse(err)) {
          // not what we wait for (the address went away ...): said once per kind, and still retried
          const problem = `${err.code ?? ''} ${err.message}`;
          if (problem !== lastProblem) log.warn(`the link port ${wanted} cannot be taken over: ${err.message}; retrying every ${every(retryMs)}`);
          lastProblem = problem;
        } else lastProblem = '';
        timer = setTimeout(retry, retryMs);
      },
    );
  };

  let announced = false;
  const announce = () => {
    if (announced || state !== 'waiting') return;
    announced = true;
    log.warn(`${reason.replace(/^the/, 'The')}. MCP is served meanwhile with no computers linked (CC_LINK_RETRY_MS=${retryMs}; 0 exits instead).`);
  };
  if (state === 'waiting') {
    options.onUnreachable(reason);
    if (!options.quiet) announce();
    timer = setTimeout(retry, retryMs);
  }

  return {
    get server() {
      return server;
    },
    announce,
    status() {
      if (state === 'waiting') return { state, address: wanted, reason, retryMs, waitingSince: since };
      return { state, address: server ? hostPort(options.host, server.address.port) : wanted };
    },
    async close() {
      if (state === 'closed') return;
      const was = server;
      state = 'closed';
      server = null;
      if (timer) clearTimeout(timer);
      timer = null;
      options.onUnreachable(null);
      await Promise.all([was?.close(), attempt]);
    },
  };
}

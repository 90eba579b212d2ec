// Which link handshakes may carry an Origin header. Browsers send one on every WebSocket (and
// WebSockets have no same-origin rule, so any page the operator opens could dial the link port);
// CC:Tweaked's handshaker sends none. Some Java WebSocket clients (Netty's, as builds of CC may
// bundle it) add their own, naming the address they dial: `http://<Host>` (`https://` for wss), which
// no cross-site page can send, as its Origin is its own site. Pure.
import { hostName, isLoopbackHost } from '../loopback.js';

/**
 * Why a link handshake with these headers is refused, or null when it may go on: no Origin; one
 * listed in CC_LINK_ALLOWED_ORIGINS; or one naming the very address dialled (the Host header),
 * except a name that is not loopback while the link port is (a DNS-rebinding page's own name).
 */
export function linkOriginProblem(origin: string | undefined, host: string | undefined, allowed: readonly string[], loopbackOnly: boolean): string | null {
  if (origin === undefined || allowed.includes(origin)) return null;
  const dialled = host === undefined ? '' : host.trim().toLowerCase();
  const lower = origin.trim().toLowerCase();
  if (dialled !== '' && (lower === `http://${dialled}` || lower === `https://${dialled}`)) {
    if (!loopbackOnly || isLoopbackHost(hostName(dialled))) return null;
    return 'a page of another site reached the loopback link port through its own name (DNS rebinding)';
  }
  return 'a browser page may not link as a computer';
}

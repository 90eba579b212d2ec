// The hello handshake of a computer socket: the admission limits, the link token, registering the link
// and answering hello-ok (with the bridge's frame limit), or hello-error then close. The listener
// (server.ts) hands every parsed hello, and every socket whose first frame is not one, here.
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Admission } from './admission.js';
import type { ComputerSocket } from './computer-socket.js';
import { encodeHelloError, encodeHelloOk, type HelloErrorCode, type HelloFrame } from './frames.js';
import { omittedText } from './identity-text.js';
import type { KeyPins, PinCheck } from './pins.js';
import { logName, logText, type LinkRegistry } from './registry.js';

export const CLOSE_POLICY = 1008;
/** A wrong or missing link token: the computer should stop and ask for the right one. */
export const CLOSE_UNAUTHORIZED = 4401;
/** A limit was hit: try again later. */
export const CLOSE_TRY_AGAIN = 1013;
/** The computer id is pinned to another key (CC_LINK_PIN): retrying cannot help. */
export const CLOSE_KEY_MISMATCH = 4409;
/** CC_LINK_PIN=strict and the computer id is not enrolled: the operator must let it in first. */
export const CLOSE_NOT_ENROLLED = 4403;
/**
 * The operator reset this computer id's pin (POST /pins/<id>/reset): the key its live link was admitted
 * with is no longer trusted, so that link is closed. mcp-computer stops (as for every 44xx close) and
 * says so; started again, its next keyed hello is pinned under the rules.
 */
export const CLOSE_PIN_RESET = 4410;
export const PIN_RESET_REASON = 'pin_reset: the operator reset this computer id\'s pin; start mcp-computer again to link';
/** The reset distrusts the key the link was made with (the default): relinking with it is refused. */
export const PIN_RESET_DISTRUSTED_REASON = 'pin_reset: its key is no longer trusted here; give this computer a new key (set mcp.key new), then start mcp-computer again';

const REASONS: Record<HelloErrorCode, string> = {
  invalid: 'invalid hello',
  unauthorized: 'unauthorized',
  busy: 'try again later',
  key_mismatch: 'key_mismatch: this computer id is held by another key; the operator resets it with cc-mcp pin-reset <id>',
  not_enrolled: 'not_enrolled: this bridge takes only enrolled computer ids (CC_LINK_PIN=strict)',
};

export interface HelloOptions {
  registry: LinkRegistry;
  admission: Admission;
  metrics: Metrics;
  log: Logger;
  /** Logs a warning a peer can provoke at will (through the listener's budget). */
  warn(line: string): void;
  /** Largest frame the bridge takes from a computer (CC_MAX_FRAME_BYTES), told in hello-ok. */
  maxFrameBytes: number;
  /** When it holds tokens, a hello must carry one of them (CC_LINK_TOKEN). */
  tokens?: { readonly enabled: boolean; matches(token: string | null): boolean };
  /** Computer ids pinned to the key they first linked with (CC_LINK_PIN); none when absent (off). */
  pins?: KeyPins;
}

export interface Hellos {
  /** A valid hello on `ws`: links it, or refuses it (limits, token), or ignores a second one. */
  hello(ws: ComputerSocket, frame: HelloFrame): void;
  /**
   * A malformed hello, or a first frame that is not a hello (not JSON, binary, another type):
   * hello-error `invalid`, then close 1008 with `invalid hello: <error>` (cut to 123 bytes).
   */
  reject(ws: ComputerSocket, error: string): void;
  /** `ws` closed: a hello of it that waits for its pin's write no longer holds a link slot. */
  closed(ws: ComputerSocket): void;
}

/** A close frame's reason holds at most 123 bytes (RFC 6455 5.5: 125 with the code). */
export const MAX_CLOSE_REASON_BYTES = 123;

/** `text` cut to fit a close frame's reason, ending in '...' when cut. */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= MAX_CLOSE_REASON_BYTES) return text;
  let cut = text.slice(0, MAX_CLOSE_REASON_BYTES - 3);
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

export function helloHandshake(options: HelloOptions): Hellos {
  const { registry, admission, metrics, log, warn, tokens, pins } = options;
  const helloOk = encodeHelloOk(options.maxFrameBytes, registry.maxIdentityBytes);
  /**
   * Hellos admitted that wait for their pin's write, counted as links against CC_MAX_LINKS while
   * their socket is open: a write that never ends (a hung file system) must not keep the slots of
   * sockets long closed.
   */
  const waiting = new Set<ComputerSocket>();

  /** hello-error, then close: the socket never becomes a link, so it is never sent a request. */
  function refuse(ws: ComputerSocket, error: string, code: HelloErrorCode, closeCode: number, reason = REASONS[code]): void {
    if (ws.helloTimer) clearTimeout(ws.helloTimer);
    ws.helloTimer = null;
    admission.close(ws);
    ws.send(encodeHelloError(error, code));
    ws.close(closeCode, reason);
  }

  return {
    hello(ws, frame) {
      if (ws.link) {
        metrics.framesRejected.inc('second_hello');
        warn(`link ${logName(ws.link.computerId, ws.link.label)} sent a second hello; ignored`);
        return;
      }
      if (ws.stage !== 'pending') return; // already refused; the socket is closing
      const current = registry.get(frame.computerId);
      const refusal = admission.hello(ws, registry.size + waiting.size, current ? current.remoteAddress.slice(0, current.remoteAddress.lastIndexOf(':')) : null);
      if (refusal) {
        metrics.linksRefused.inc(refusal.reason);
        warn(`link from ${ws.remoteAddress} (computer ${frame.computerId}) refused: ${refusal.message}`);
        refuse(ws, refusal.message, 'busy', CLOSE_TRY_AGAIN);
        return;
      }
      // only after the limits, so a token guess costs a hello from the rate budget
      if (tokens?.enabled && !tokens.matches(frame.token)) {
        metrics.linksRefused.inc('unauthorized');
        // the remote address, never the token
        warn(`link from ${ws.remoteAddress} (computer ${frame.computerId}) refused: ${frame.token === null ? 'no link token' : 'wrong link token'}`);
        refuse(ws, 'the bridge refused the token (CC_LINK_TOKEN); set it on the computer with: set mcp.token <token>', 'unauthorized', CLOSE_UNAUTHORIZED);
        return;
      }
      const pin = pins ? pins.check(frame.computerId, frame.key) : 'ok';
      if (pin === 'distrusted') {
        // told only to a holder of the very key the reset forgot, who knew the id was pinned to it
        metrics.linksRefused.inc('key_distrusted');
        const id = frame.computerId;
        warn(`link from ${ws.remoteAddress} (computer ${id}) refused: the key its pin reset stopped trusting${current ? `; its link from ${current.remoteAddress} is kept` : ''}`);
        refuse(
          ws,
          `computer id ${id} was reset by the bridge's operator, and this hello carries the key that reset stopped trusting (mcp.key): the id links only with a new key now. To give this computer a new key: set mcp.key new, then start mcp-computer again${pins!.strict ? ` (CC_LINK_PIN=strict: while the id is open, cc-mcp pin-reset ${id})` : ''}. If this computer was not reinstalled and is to keep its key, the operator lets the key in again with: cc-mcp pin-reset ${id} --allow-old-key (or POST /pins/${id}/reset?allowOldKey=true).`,
          'key_mismatch',
          CLOSE_KEY_MISMATCH,
          closeReason(`key_mismatch: this key was distrusted by a pin reset; the operator runs cc-mcp pin-reset ${id} --allow-old-key`),
        );
        return;
      }
      if (pins?.strict && pin !== 'ok' && pin !== 'new') {
        strictRefusal(ws, frame, pin);
        return;
      }
      if (pin === 'mismatch' || pin === 'missing') {
        metrics.linksRefused.inc('key_mismatch');
        // the remote address, never the key; the live link (if any) is left alone
        const held = current ? `; its link from ${current.remoteAddress} is kept` : '';
        warn(`link from ${ws.remoteAddress} (computer ${frame.computerId}) refused: ${pin === 'missing' ? 'no key' : 'another key'} than the one computer ${frame.computerId} is pinned to${held}`);
        const why = pin === 'missing' ? 'this hello carries no key (mcp.key)' : 'this computer\'s key (mcp.key) is another';
        refuse(
          ws,
          `computer id ${frame.computerId} is held by another key: the first computer that linked as ${frame.computerId} had a key, and ${why}. If this computer was reinstalled, the bridge's operator resets the pin with: cc-mcp pin-reset ${frame.computerId} (or POST /pins/${frame.computerId}/reset).`,
          'key_mismatch',
          CLOSE_KEY_MISMATCH,
        );
        return;
      }
      if (pin === 'new') {
        if (!pins!.pin(frame.computerId, frame.key!)) {
          warn(`computer ${frame.computerId} linked without a pin: CC_LINK_MAX_PINS (${pins!.max}) ids are pinned, and none can be evicted (every unconfirmed pin's computer is linked); raise CC_LINK_MAX_PINS, or use CC_LINK_PIN=strict`);
        } else if (pins!.lastEvicted !== null) {
          warn(`computer ${frame.computerId} pinned in place of computer ${pins!.lastEvicted}'s unconfirmed pin (CC_LINK_MAX_PINS ${pins!.max} reached; its links had not stayed up CC_LINK_PIN_CONFIRM_MS in all, and it is not linked)`);
        }
      }
      // A new pin is on disk (CC_LINK_PINS_FILE) before its hello-ok, so a crash after the answer
      // cannot lose it: the hello waits for the write that holds it (one write for every pin made
      // meanwhile), as does a relink with the same key that comes during that write. The hello timer
      // still runs: a write stuck past it closes the socket, and the computer tries again.
      const saving = frame.key === null ? null : (pins?.saving(frame.computerId) ?? null);
      if (saving !== null) {
        waiting.add(ws);
        void saving.then(() => {
          waiting.delete(ws);
          afterSave(ws, frame);
        });
        return;
      }
      accept(ws, frame);
    },
    closed(ws) {
      waiting.delete(ws);
    },
    reject(ws, error) {
      metrics.linksRefused.inc('invalid');
      // the reason says what was wrong too, for a peer that reads the close and not hello-error
      refuse(ws, error, 'invalid', CLOSE_POLICY, closeReason(`${REASONS.invalid}: ${error}`));
    },
  };

  /**
   * CC_LINK_PIN=strict refuses every hello it does not link with one answer per kind of hello: a
   * keyless one always gets the same words, and so does a keyed one, whether its id is pinned to
   * another key or not enrolled at all. A peer that can reach the link port learns nothing about
   * which ids are pinned; the operator's log (and cc_links_refused_total's reason) says which.
   */
  function strictRefusal(ws: ComputerSocket, frame: HelloFrame, pin: PinCheck): void {
    const id = frame.computerId;
    const current = registry.get(id);
    const held = current ? `; its link from ${current.remoteAddress} is kept` : '';
    const letIn = `the bridge's operator lets it in with: cc-mcp pin-reset ${id} (or POST /pins/${id}/reset); then start mcp-computer again within ${Math.round(pins!.enrollMs / 1000)} s.`;
    if (frame.key === null) {
      metrics.linksRefused.inc('not_enrolled');
      const state = pins!.has(id) ? 'the id is pinned' : pins!.isOpen(id) ? 'the id is open for enrollment' : 'the id is not enrolled';
      warn(`link from ${ws.remoteAddress} (computer ${id}) refused: no key (CC_LINK_PIN=strict; ${state})${held}`);
      refuse(
        ws,
        `computer id ${id} cannot link without a key: this bridge takes only hellos that carry the key (mcp.key) an enrolled computer id is pinned to (CC_LINK_PIN=strict), and this one carries none; run a mcp-computer that makes one. If the id is not enrolled yet, ${letIn}`,
        'not_enrolled',
        CLOSE_NOT_ENROLLED,
      );
      return;
    }
    // the metric's reason is for the operator, like the log: /metrics is on the MCP listener (behind
    // MCP_AUTH_TOKEN when set), not on the link port
    metrics.linksRefused.inc(pin === 'mismatch' ? 'key_mismatch' : 'not_enrolled');
    const state = pin === 'mismatch' ? `another key than the one computer ${id} is pinned to` : 'not enrolled';
    warn(`link from ${ws.remoteAddress} (computer ${id}) refused: ${state} (CC_LINK_PIN=strict)${held}`);
    refuse(
      ws,
      `computer id ${id} does not link with this key: this bridge takes only computer ids it has pinned, each with the key (mcp.key) it is pinned to (CC_LINK_PIN=strict). If this computer is new or was reinstalled, ${letIn}`,
      'not_enrolled',
      CLOSE_NOT_ENROLLED,
    );
  }

  /** The pins file holds the hello's pin now (or its write failed, logged): link, unless that changed. */
  function afterSave(ws: ComputerSocket, frame: HelloFrame): void {
    // closed meanwhile (the computer went, the hello timer, the bridge stopping)
    if (ws.readyState !== ws.OPEN || ws.stage !== 'linked' || ws.link !== null) return;
    // the operator reset the pin meanwhile: this hello was made with the key the reset stopped trusting
    if (pins!.check(frame.computerId, frame.key) !== 'ok') {
      if (ws.helloTimer) clearTimeout(ws.helloTimer);
      ws.helloTimer = null;
      log.info(`link from ${ws.remoteAddress} (computer ${frame.computerId}) closed before hello-ok: its pin was reset meanwhile`);
      ws.close(CLOSE_PIN_RESET, pins!.distrusts(frame.computerId) ? PIN_RESET_DISTRUSTED_REASON : PIN_RESET_REASON);
      return;
    }
    accept(ws, frame);
  }

  /** Registers the link and answers hello-ok. */
  function accept(ws: ComputerSocket, frame: HelloFrame): void {
    if (ws.helloTimer) clearTimeout(ws.helloTimer);
    ws.helloTimer = null;
    const { link, replaced } = registry.register(ws, frame, ws.remoteAddress);
    ws.link = link;
    metrics.linksLinked++;
    ws.send(helloOk);
    if (replaced) metrics.linksReplaced++;
    if (replaced) log.info(`replaced ${logName(replaced.computerId, replaced.label)} from ${replaced.remoteAddress}`);
    // the time the replaced link was up counts toward confirming the id's pin
    if (replaced) pins?.linkEnded(replaced.computerId, replaced.connectedAt);
    log.info(`linked ${logName(link.computerId, link.label)} from ${ws.remoteAddress}${link.version ? ` (mcp-computer ${logText(link.version)})` : ''}${omittedText(link.identity.omitted)}`);
  }
}

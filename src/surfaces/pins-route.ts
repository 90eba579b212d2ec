// The operator's pins (CC_LINK_PIN): GET /pins lists the pinned computer ids (never a key or its hash),
// POST /pins/<id>/reset forgets one pin without a restart (a reinstalled computer; with
// CC_LINK_PIN=strict it also lets the id in for CC_LINK_ENROLL_MS), distrusts the key it forgot (that
// key cannot pin the id again until another has; ?allowOldKey=true does not, and lifts an earlier one)
// and closes the id's live link, which was admitted with the key just forgotten (close 4410). Behind the same Origin/Host guards
// and bearer token as /mcp and /reload (http.ts); a POST with a form or text body changes nothing.
import type { IncomingMessage } from 'node:http';
import type { LinkRegistry } from '../link/registry.js';
import type { KeyPins } from '../link/pins.js';
import { parseComputerId } from '../link/computer-id.js';
import { CLOSE_PIN_RESET, PIN_RESET_DISTRUSTED_REASON, PIN_RESET_REASON } from '../link/hello.js';
import type { Logger } from '../log.js';
import { UNSUPPORTED_MEDIA_HEADERS, contentTypeProblem } from './content-type.js';
import { sendJson } from './respond.js';
import type { Methods } from './router.js';

export interface PinsRouteDeps {
  /** Undefined with CC_LINK_PIN=off. */
  pins: KeyPins | undefined;
  links: LinkRegistry;
  log: Logger;
}

const PIN_OFF = 'CC_LINK_PIN is off: the bridge pins no computer id, so there is nothing to list or reset.';

function from(req: IncomingMessage): string {
  return `${req.socket.remoteAddress ?? 'unknown'}:${req.socket.remotePort ?? 0}`;
}

export function pinsRoutes(deps: PinsRouteDeps): Record<string, Methods> {
  const { pins, links, log } = deps;
  return {
    '/pins': {
      GET: (_req, res) => {
        if (!pins) return sendJson(res, 409, { ok: false, error: PIN_OFF });
        sendJson(res, 200, { ok: true, strict: pins.strict, pinned: pins.entries().map(([id]) => id), distrusted: pins.distrusted().map(([id]) => id), max: pins.max });
      },
      '*': (req, res) => sendJson(res, 405, { error: 'method not allowed', message: `${req.method} is not allowed on /pins; use GET, or POST /pins/<id>/reset` }, { allow: 'GET, HEAD' }),
    },
    '/pins/*': {
      POST: async (req, res, ctx) => {
        // no body is read, but a form or text/plain POST (a browser's, cross-site) resets nothing
        const mediaProblem = contentTypeProblem(req.headers['content-type']);
        if (mediaProblem !== null) return sendJson(res, 415, { error: 'unsupported media type', message: mediaProblem }, UNSUPPORTED_MEDIA_HEADERS);
        req.resume();
        const m = /^([^/]*)\/reset$/.exec(ctx.rest);
        if (!m) return sendJson(res, 404, { ok: false, error: 'not found', message: 'POST /pins/<computer id>/reset resets one pin' });
        const raw = m[1] as string;
        // a safe integer, as a hello's computerId (not echoed)
        const computerId = parseComputerId(raw);
        if (computerId === null) return sendJson(res, 400, { ok: false, error: 'bad computer id', message: `the computer id in POST /pins/<id>/reset must be a whole number >= 0 (${raw.length} characters given)` });
        // ?allowOldKey=true (cc-mcp pin-reset <id> --allow-old-key): the key the pin had is not distrusted
        const query = [...ctx.query];
        const allowOldKey = query.length === 1 && query[0]?.[0] === 'allowOldKey' && query[0][1] === 'true';
        if (query.length > 0 && !allowOldKey) {
          return sendJson(res, 400, { ok: false, error: 'bad query', message: 'POST /pins/<id>/reset takes no query but allowOldKey=true (cc-mcp pin-reset <id> --allow-old-key)' });
        }
        if (!pins) return sendJson(res, 409, { ok: false, error: PIN_OFF });
        const result = pins.reset(computerId, { allowOldKey });
        if (result === 'full') {
          return sendJson(res, 409, { ok: false, error: `CC_LINK_MAX_PINS (${pins.max}) ids are pinned or open for enrollment already: computer ${computerId} cannot be let in` });
        }
        if (result === 'distrust_full') {
          return sendJson(res, 409, {
            ok: false,
            error: `CC_LINK_MAX_PINS (${pins.max}) ids distrust the key a reset forgot already: computer ${computerId}'s pin is kept; reset it with --allow-old-key (its key is then not distrusted), or lift another id's distrust first`,
          });
        }
        // the key the live link was admitted with is no longer trusted: that link ends now (its calls
        // in flight fail as for any lost link) instead of serving as the id until it drops
        const link = links.get(computerId);
        const close = link !== undefined && result.wasPinned;
        if (close) {
          links.unregister(link, 'its pin was reset by the operator');
          link.socket.close(CLOSE_PIN_RESET, result.distrusting ? PIN_RESET_DISTRUSTED_REASON : PIN_RESET_REASON);
        }
        const kept = link === undefined ? '' : close ? `; its link from ${link.remoteAddress} is closed (${CLOSE_PIN_RESET} pin_reset)` : `; its link from ${link.remoteAddress} is kept (it was not pinned)`;
        const a = result.distrusting ? 'a new key' : 'a key';
        const next =
          result.openUntil === null
            ? `the next hello with ${a} pins it`
            : `the next hello with ${a} until ${new Date(result.openUntil).toISOString()} pins it (CC_LINK_PIN=strict)`;
        const oldKey = result.distrusting
          ? `; its old key is refused until another key is pinned (cc-mcp pin-reset ${computerId} --allow-old-key lets it in again)`
          : result.lifted
            ? '; the key an earlier reset distrusted may pin it again (--allow-old-key)'
            : '';
        const message = `computer ${computerId}: ${result.wasPinned ? 'pin reset' : 'was not pinned'}; ${next}${oldKey}${kept}`;
        log.info(`${message} (POST /pins/${computerId}/reset from ${from(req)})`);
        // answered once the pins file holds the reset (with CC_LINK_PINS_FILE): a restart after the
        // answer keeps what it says (the pin gone; under strict, the opening until its end)
        if (result.saved) await result.saved;
        sendJson(res, 200, {
          ok: true,
          computerId,
          wasPinned: result.wasPinned,
          linked: link !== undefined,
          closed: close,
          oldKeyDistrusted: result.distrusting,
          ...(result.openUntil === null ? {} : { openUntil: new Date(result.openUntil).toISOString() }),
          message,
        });
      },
      '*': (req, res) => sendJson(res, 405, { error: 'method not allowed', message: `${req.method} is not allowed here; use POST /pins/<id>/reset` }, { allow: 'POST' }),
    },
  };
}

// POST /reload: re-read the CC_CONFIG file (as SIGHUP does). A bad file changes nothing and is
// answered 422 with every problem; a good one is applied as a diff and answered with what changed.
import type { ConfigHub } from '../config/hub.js';
import { sendJson } from './respond.js';
import { UNSUPPORTED_MEDIA_HEADERS, contentTypeProblem } from './content-type.js';
import type { Methods } from './router.js';

export function reloadRoute(hub: ConfigHub | null): Methods {
  return {
    POST: (req, res) => {
      // no body is read, but a form or text/plain POST (a browser's, cross-site) reloads nothing
      const mediaProblem = contentTypeProblem(req.headers['content-type']);
      if (mediaProblem !== null) {
        sendJson(res, 415, { error: 'unsupported media type', message: mediaProblem }, UNSUPPORTED_MEDIA_HEADERS);
        return;
      }
      req.resume();
      if (!hub) {
        sendJson(res, 409, { ok: false, error: 'The bridge was started without CC_CONFIG: there is no file to reload.' });
        return;
      }
      const result = hub.reload();
      sendJson(res, result.ok ? 200 : 422, result);
    },
    '*': (_req, res) => sendJson(res, 405, { error: 'method not allowed', message: 'POST /reload re-reads the config file' }, { allow: 'POST' }),
  };
}

// What the JSON-RPC client (client.ts) does with each value its transport delivers: bounds it,
// classifies it (message.ts), and settles the request it answers, runs the notification's handlers,
// or answers the other side's request (only ping; the bridge offers no client capabilities).
import type { Logger } from '../log.js';
import { METHOD_NOT_FOUND, classify, errorResponse, isRecord, resultResponse, type JsonRpcId } from './message.js';
import { boundsProblem } from './bounds.js';
import { RpcClientError, type Pending } from './client-request.js';
import { cutText, quoteValue } from './quote.js';

/** The client as its inbound side sees it; one object per client, not per message. */
export interface InboundPeer {
  readonly pending: Map<JsonRpcId, Pending>;
  readonly notificationHandlers: Map<string, Set<(params: unknown) => void>>;
  readonly log: Logger | undefined;
  /** How the peer is named in log lines. */
  readonly label: string;
  /** Deepest nesting a message may have (CC_UPSTREAM_MAX_JSON_DEPTH). */
  readonly maxDepth: number;
  /** Sends an answer to a request from the other side. */
  reply(message: unknown): void;
}

/** Fails request `id` (when it is waiting) because its answer was unusable: `the answer <reason>`. */
export function failAnswer(peer: InboundPeer, id: JsonRpcId | null, reason: string): void {
  const pending = id === null ? undefined : peer.pending.get(id);
  pending?.reject(new RpcClientError('ERR_RPC_MALFORMED', `${pending.method}: the answer ${reason}`));
}

/**
 * Handles one parsed value from the transport: a message, or a batch array of them. `chars`: the
 * length of the JSON text it came from, when known (a batch's items are each shorter than it).
 */
export function receive(peer: InboundPeer, value: unknown, inBatch = false, chars = Infinity): void {
  if (Array.isArray(value) && !inBatch) {
    for (const item of value) receive(peer, item, true, chars);
    return;
  }
  // bounded before anything walks it (classify, the tools that copy a result, JSON.stringify); d
  // levels take 2d brackets, so a text shorter than 2 * (maxDepth + 1) characters is within the
  // bound without a walk (nearly every answer of a small tool: a stdio line's length is known)
  const tooDeep = chars < 2 * (peer.maxDepth + 1) ? null : boundsProblem(value, { maxDepth: peer.maxDepth });
  if (tooDeep) {
    // the id sits at the top: reading it walks nothing; a request from the server has a method
    const id = isRecord(value) && !('method' in value) && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null;
    const pending = id === null ? undefined : peer.pending.get(id);
    if (pending) failAnswer(peer, id, `${tooDeep} (CC_UPSTREAM_MAX_JSON_DEPTH)`);
    else peer.log?.warn(`${peer.label} sent a message that ${tooDeep}; dropped`);
    return;
  }
  const message = classify(value);
  const log = peer.log;
  switch (message.kind) {
    case 'invalid': {
      // a broken answer that still names one of our requests fails that request now, not at its timeout
      const pending = message.id === null || (isRecord(value) && 'method' in value) ? undefined : peer.pending.get(message.id);
      if (pending) {
        pending.reject(new RpcClientError('ERR_RPC_MALFORMED', `${pending.method}: the answer is not JSON-RPC (${message.reason})`));
        return;
      }
      log?.warn(`${peer.label} sent an invalid JSON-RPC message (${message.reason}); ignored`);
      return;
    }
    case 'notification': {
      const handlers = peer.notificationHandlers.get(message.method);
      for (const handler of handlers ?? []) handler(message.params);
      return;
    }
    case 'request':
      // the bridge offers no client capabilities (sampling, roots, elicitation): only ping
      peer.reply(message.method === 'ping' ? resultResponse(message.id, {}) : errorResponse(message.id, METHOD_NOT_FOUND, `Method not found: ${cutText(message.method)}`));
      return;
    case 'response': {
      const response = value as { id: JsonRpcId | null; result?: unknown; error?: { code: number; message: string; data?: unknown } };
      const pending = response.id === null ? undefined : peer.pending.get(response.id);
      if (!pending) {
        log?.debug(`${peer.label} answered an unknown or finished request ${quoteValue(response.id)}; ignored`);
        return;
      }
      if (isRecord(response.error)) {
        const { code, message: text, data } = response.error;
        pending.reject(new RpcClientError('ERR_RPC_REMOTE', `${pending.method} failed: ${text} (${code})`, code, data));
      } else {
        pending.resolve(response.result);
      }
    }
  }
}

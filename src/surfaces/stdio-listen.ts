// 2026-07-28 subscriptions/listen over --stdio: every subscription shares stdout, told apart by the
// subscription id in each message's _meta; notifications/cancelled for its request id ends one (the
// dispatcher finds it under callKey), EOF ends them all. stdio has no stream of its own to close, so
// a subscription the server ends gets its answer and then a notifications/cancelled for its id.
import { callKey, type Caller, type ListenTransport } from '../mcp/exchange.js';
import type { StdioOutput } from './stdio-output.js';

/** How `caller` (the one client on this pipe) carries its subscriptions on `out`. */
export function stdioListen(caller: Caller, out: Pick<StdioOutput, 'write' | 'notice' | 'payOwed'>): ListenTransport {
  const { write, notice, payOwed } = out;
  return {
    problem: null,
    key: (id) => callKey(caller, id),
    // the one client on this pipe (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT)
    client: () => caller.scope,
    open: (_key, id) => {
      const target = {};
      return {
        send: (message) => notice(target, message),
        end(final, reason) {
          // the server ends it (shutdown, or room for a newer one): a notice still owed to it, the
          // listen request's answer, then the cancel notice that closes a stdio subscription
          payOwed(target);
          write(final);
          write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
        },
      };
    },
  };
}

// How a call to an upstream server's tool failed, as the tool result the client sees (pure): the
// JSON-RPC client's error code becomes a failure code (cancelled, timeout, tool_error, unavailable).
import type { RpcClientError } from '../jsonrpc/client.js';
import { failedResult, type ToolResult } from '../tools/tool.js';

/** `name` is the bridge's name of the tool; `timeoutMs` the server's request timeout. */
export function callFailure(err: RpcClientError, serverId: string, name: string, timeoutMs: number): ToolResult {
  switch (err.code) {
    case 'ERR_RPC_CANCELLED':
      return failedResult(`${name} was cancelled; upstream server "${serverId}" was told to stop`, 'cancelled');
    case 'ERR_RPC_TIMEOUT':
      return failedResult(`upstream server "${serverId}" did not answer ${name} within ${timeoutMs} ms; the call was cancelled upstream`, 'timeout');
    case 'ERR_RPC_REMOTE':
      return failedResult(`upstream server "${serverId}" refused the call: ${err.message}`, 'tool_error');
    case 'ERR_RPC_MALFORMED':
      return failedResult(`upstream server "${serverId}" sent a malformed answer: ${err.message}`, 'tool_error');
    case 'ERR_RPC_SEND':
      // the call or its answer was lost on the way (a pipe, a cut connection, an answer that is not JSON)
      return failedResult(`upstream server "${serverId}" failed on ${name}: ${err.message}`, 'unavailable');
    default:
      return failedResult(`upstream server "${serverId}" went down during the call: ${err.message}`, 'unavailable');
  }
}

// How a failed upstream call is classified: each JSON-RPC client error code becomes its failure code
// (REST maps them to statuses: timeout 504, unavailable and cancelled 503, tool_error 200) and a
// sentence naming the server, the tool and, for a timeout, the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RpcClientError } from '../../dist/jsonrpc/client-request.js';
import { FAILURE } from '../../dist/tools/tool.js';
import { callFailure } from '../../dist/upstream/call-failure.js';

test('each client error code is classified as its own failure, with a sentence that says what happened', () => {
  const cases = [
    ['ERR_RPC_CANCELLED', 'cancelled', 'nether__dig was cancelled; upstream server "nether" was told to stop'],
    ['ERR_RPC_TIMEOUT', 'timeout', 'upstream server "nether" did not answer nether__dig within 1500 ms; the call was cancelled upstream'],
    ['ERR_RPC_REMOTE', 'tool_error', 'upstream server "nether" refused the call: why'],
    ['ERR_RPC_MALFORMED', 'tool_error', 'upstream server "nether" sent a malformed answer: why'],
    ['ERR_RPC_SEND', 'unavailable', 'upstream server "nether" failed on nether__dig: why'],
    ['ERR_RPC_CLOSED', 'unavailable', 'upstream server "nether" went down during the call: why'],
  ];
  for (const [code, failure, text] of cases) {
    const result = callFailure(new RpcClientError(code, 'why'), 'nether', 'nether__dig', 1500);
    assert.equal(result[FAILURE], failure, code);
    assert.equal(result.isError, true, code);
    assert.deepEqual(result.content, [{ type: 'text', text }], code);
  }
});

// HTTP/1.1 pipelining: a client may send its next request before the answer to the previous one.
// Node runs the handler at once but queues the answer behind the one in progress on that connection,
// and when the connection closes it closes only the answer at the head: a queued answer never emits
// 'close'. Whatever waits on that event (a call to cancel, an answer being written, an event stream
// with its subscription and tool watcher, the listener's in-flight set) then waited for ever, holding
// its memory and its place under MCP_MAX_GET_STREAMS / MCP_MAX_SUBSCRIPTIONS. Such answers are closed
// here with their connection. Requests that are not pipelined (nearly all) only pay one check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const QUEUED = Symbol('answers queued on this connection');

type Connection = Socket & { [QUEUED]?: Set<ServerResponse> };

/** Call for every request: an answer queued behind another is closed when its connection closes. */
export function closeWithConnection(req: IncomingMessage, res: ServerResponse): void {
  // at the head of its connection: node closes it itself
  if (res.socket !== null) return;
  const connection = req.socket as Connection;
  let queued = connection[QUEUED];
  if (!queued) {
    const answers = (queued = connection[QUEUED] = new Set());
    connection.once('close', () => {
      for (const answer of answers) {
        // one that reached the head in the meantime is closed by node
        if (answer.socket !== null) continue;
        answer.destroy();
        answer.emit('close');
      }
      answers.clear();
    });
  }
  queued.add(res);
  res.once('close', () => queued.delete(res));
}

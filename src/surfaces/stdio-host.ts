// Whether the --stdio host can still read stdout. The bridge only learns that the host is gone
// (closed its end of stdout, or quit) from stdout itself:
// - a write that fails (EPIPE): true of every kind of stdout, but only once something is written;
// - without writing, when stdout is a socket: Node hosts (Claude Code, MCP Inspector, the SDK's
//   StdioClientTransport) start their servers with child_process, whose stdio "pipes" are Unix
//   socket pairs; when the host closes its end, reading our end gives the end of the stream at
//   once. So the bridge reads stdout's socket (nothing ever arrives there; anything that does is
//   dropped) and at that end makes one empty write, which fails with EPIPE only when the host no
//   longer reads (a host that merely shut down its own sending side does not count).
// A real pipe (a shell's `|`, Python's subprocess.PIPE) tells a writer whose reader is gone only
// at its next write: Linux accepts an empty write to such a pipe, and Node has no poll(); there the
// first failed write is the signal. Measured on Linux 6.18, Node 20: after the host closed its end,
// the empty write fails with EPIPE on a socket pair and succeeds on a pipe; reading a pipe's write
// end is refused (ENOTCONN) by libuv.
import { fstatSync } from 'node:fs';
import type { Writable } from 'node:stream';

/** The libuv handle under a net.Socket (what process.stdout is over a pipe or socket); private Node API. */
interface StreamHandle {
  readStart(): number;
  readStop(): number;
  onread: (buffer?: ArrayBuffer) => void;
}

function socketHandle(output: Writable): StreamHandle | null {
  const { fd, _handle: handle } = output as { fd?: unknown; _handle?: Partial<StreamHandle> | null };
  if (typeof fd !== 'number' || handle === null || handle === undefined) return null;
  if (typeof handle.readStart !== 'function' || typeof handle.readStop !== 'function') return null;
  try {
    if (!fstatSync(fd).isSocket()) return null;
  } catch {
    return null;
  }
  return handle as StreamHandle;
}

/**
 * Calls `onGone(reason)` once the host can no longer read `output` ("EPIPE": the error's code, or
 * "closed"), as early as that can be seen (above). Returns a function that stops watching.
 */
export function watchHost(output: Writable, onGone: (reason: string) => void): () => void {
  let over = false;
  const gone = (reason: string) => {
    if (over) return;
    stop();
    onGone(reason);
  };
  const onError = (err: NodeJS.ErrnoException) => gone(err.code ?? err.message);
  const onClose = () => gone('closed');
  output.on('error', onError);
  output.once('close', onClose);
  const handle = socketHandle(output);
  let reading = false;
  if (handle !== null) {
    // no ArrayBuffer: the end of the stream (or a read error); data, never expected, is dropped
    handle.onread = (buffer) => {
      if (buffer !== undefined || !reading) return;
      reading = false;
      handle.readStop();
      // fails (an 'error' event, above) only when the host no longer reads
      if (!over) output.write('');
    };
    reading = handle.readStart() === 0;
  }
  const stop = () => {
    over = true;
    output.off('close', onClose);
    if (reading && handle !== null) {
      reading = false;
      handle.readStop();
    }
  };
  // the error listener stays: later errors (writes still queued) are this same end, never unhandled
  return stop;
}

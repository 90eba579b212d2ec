// An in-memory Transport for client tests: the test plays the other side.

/** A transport whose other side is the test: `sent` records, `deliver` plays the server. */
export function memoryTransport({ failSend = null } = {}) {
  const t = {
    sent: [],
    closedCount: 0,
    handlers: null,
    waiters: [],
    async start(handlers) {
      t.handlers = handlers;
    },
    async send(message, signal) {
      if (failSend && failSend(message)) throw new Error('pipe broken');
      t.sent.push({ message, signal });
      for (const w of t.waiters.splice(0)) w();
    },
    async close() {
      t.closedCount++;
    },
    deliver(value) {
      t.handlers.message(value);
    },
    /** Resolves with the first sent message matching pred. */
    async next(pred) {
      for (;;) {
        const hit = t.sent.find((s) => pred(s.message));
        if (hit) return hit.message;
        await new Promise((resolve) => t.waiters.push(resolve));
      }
    },
  };
  return t;
}


// One waiting mechanism for the harness: a waiter is re-checked whenever its owner sees new input.

/**
 * Registers a waiter in `waiters` (the owner calls `check()` on every waiter when something
 * arrives). `check` returns undefined for "not yet", a value to resolve with, or throws to
 * reject. Rejects with `timeoutMessage()` after timeoutMs.
 */
export function waitFor(waiters, check, timeoutMs, timeoutMessage) {
  return new Promise((resolve, reject) => {
    const finish = (settle, value) => {
      clearTimeout(timer);
      waiters.delete(waiter);
      settle(value);
    };
    const waiter = {
      check: () => {
        let value;
        try {
          value = check();
        } catch (err) {
          return finish(reject, err);
        }
        if (value !== undefined) finish(resolve, value);
      },
    };
    const timer = setTimeout(() => finish(reject, new Error(timeoutMessage())), timeoutMs);
    waiters.add(waiter);
    waiter.check();
  });
}

// The transport a configured upstream server is reached over: its own child process (stdio) or its URL (HTTP).
import { isStdio, type ServerConfig } from '../config/file.js';
import type { Transport } from '../jsonrpc/client.js';
import type { Logger } from '../log.js';
import { HttpTransport } from './http.js';
import { StdioTransport } from './stdio.js';

/** A new, unstarted transport for `config`; `name` prefixes its log lines (`upstream nether`). */
export function transportFor(config: ServerConfig, deps: { maxMessageBytes: number; log: Logger }, name: string): Transport {
  if (isStdio(config)) {
    const options: ConstructorParameters<typeof StdioTransport>[0] = {
      command: config.command,
      args: config.args,
      env: config.env,
      maxLineBytes: deps.maxMessageBytes,
      log: deps.log,
      name,
    };
    if (config.cwd !== undefined) options.cwd = config.cwd;
    return new StdioTransport(options);
  }
  return new HttpTransport({ url: config.url, headers: config.headers, maxMessageBytes: deps.maxMessageBytes, log: deps.log, name });
}

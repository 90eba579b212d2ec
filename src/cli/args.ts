// cc-mcp's command line, parsed without touching anything: argv in, a command or a usage error out.
import { parseComputerId } from '../link/computer-id.js';

export const DEFAULT_URL = 'http://127.0.0.1:3000/mcp';

export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'tools' }
  | { kind: 'probe' }
  | { kind: 'health' }
  | { kind: 'pins' }
  | { kind: 'pin-reset'; computerId: number; allowOldKey: boolean }
  | { kind: 'call'; tool: string; args: CallArgs }
  | { kind: 'exec'; target: { computerId: number } | { computer: string }; source: { file: string } | { stdin: true } | { code: string } };

/** `call` arguments: one JSON object, or key=value (typed by the tool's schema) and key:=<json> pairs. */
export type CallArgs = { json: Record<string, unknown> } | { pairs: Array<{ key: string; value: string; raw: boolean }> };

export interface Invocation {
  url: string;
  json: boolean;
  command: Command;
}

export class UsageError extends Error {
  readonly code = 'ERR_USAGE';
}

export const USAGE = `Usage: cc-mcp [--url URL] [--json] <command>

Commands:
  tools                                   list the bridge's tools
  call <tool> [JSON | key=value ...]      call a tool; key:=JSON passes a raw JSON value
  probe                                   ping every linked computer (probe-computers)
  exec <id-or-label> <file.lua | - | -e CODE>
                                          run Lua on one computer (exec-lua); - reads stdin
  health                                  is the bridge up, and how many computers are linked
  pins                                    the computer ids pinned to their computer's key (CC_LINK_PIN)
  pin-reset <id> [--allow-old-key]        forget one computer id's pin (a reinstalled computer); with
                                          CC_LINK_PIN=strict also let that id in (CC_LINK_ENROLL_MS).
                                          The forgotten key cannot pin the id again until another key
                                          has; --allow-old-key does not distrust it (and lifts that)

Options:
  --url URL     MCP endpoint (default: CC_MCP_URL, else ${DEFAULT_URL})
  --json        print the raw JSON result instead of the text
  --help, -h    this text
  --version     cc-mcp's version

Environment: CC_MCP_URL; CC_MCP_TOKEN (else the first of MCP_AUTH_TOKEN) is sent as the bearer token.
Exit status: 0 ok, 1 the tool answered an error (isError), 2 usage, 3 bridge unreachable.
`;

function parseCallArgs(rest: string[]): CallArgs {
  const [first] = rest;
  if (rest.length === 1 && first !== undefined && first.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(first);
    } catch (err) {
      throw new UsageError(`the arguments are not valid JSON: ${(err as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('the JSON arguments must be an object');
    return { json: value as Record<string, unknown> };
  }
  const pairs = rest.map((arg) => {
    const m = /^([^=:]+)(:?)=(.*)$/s.exec(arg);
    if (!m) throw new UsageError(`expected key=value or key:=JSON, got ${JSON.stringify(arg)}`);
    return { key: m[1] as string, raw: m[2] === ':', value: m[3] as string };
  });
  return { pairs };
}

function parseExec(rest: string[]): Command {
  const [target, ...source] = rest;
  if (target === undefined || target === '') throw new UsageError('exec needs a computer id or label, then file.lua, - or -e CODE');
  const named = /^\d+$/.test(target) ? { computerId: Number(target) } : { computer: target };
  let from: Extract<Command, { kind: 'exec' }>['source'];
  if (source.length === 1 && source[0] === '-') from = { stdin: true };
  else if (source.length === 2 && source[0] === '-e') from = { code: source[1] as string };
  else if (source.length === 1 && source[0] !== '-e') from = { file: source[0] as string };
  else throw new UsageError('exec needs exactly one of: file.lua, - (stdin) or -e CODE');
  return { kind: 'exec', target: named, source: from };
}

/** Options may come anywhere; `--` ends them. */
export function parseArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Invocation {
  let url = env.CC_MCP_URL || DEFAULT_URL;
  /** Where the URL came from, for its error: a bad CC_MCP_URL was reported as a bad --url the user never gave. */
  let urlFrom = env.CC_MCP_URL ? 'CC_MCP_URL' : '--url';
  let json = false;
  let allowOldKey = false;
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    // exec's -e takes the next argument as code, whatever it looks like
    if (arg === '-e' && positional[0] === 'exec') {
      positional.push(arg, ...(i + 1 < argv.length ? [argv[++i] as string] : []));
      continue;
    }
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '--help' || arg === '-h') return { url, json, command: { kind: 'help' } };
    if (arg === '--version') return { url, json, command: { kind: 'version' } };
    if (arg === '--json') json = true;
    else if (arg === '--allow-old-key') allowOldKey = true;
    else if (arg === '--url' || arg.startsWith('--url=')) {
      const value = arg === '--url' ? argv[++i] : arg.slice('--url='.length);
      if (value === undefined || value === '') throw new UsageError('--url needs a value');
      url = value;
      urlFrom = '--url';
    } else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}`);
    else positional.push(arg);
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UsageError(`${urlFrom} must be an http(s) URL such as ${DEFAULT_URL}, got ${JSON.stringify(url)}`);
  }
  const [name, ...rest] = positional;
  if (allowOldKey && name !== 'pin-reset') throw new UsageError('--allow-old-key is an option of pin-reset only');
  const none = (command: Command): Command => {
    if (rest.length) throw new UsageError(`${name} takes no arguments`);
    return command;
  };
  switch (name) {
    case undefined:
      throw new UsageError('no command given');
    case 'tools':
      return { url, json, command: none({ kind: 'tools' }) };
    case 'probe':
      return { url, json, command: none({ kind: 'probe' }) };
    case 'health':
      return { url, json, command: none({ kind: 'health' }) };
    case 'pins':
      return { url, json, command: none({ kind: 'pins' }) };
    case 'pin-reset': {
      const [id, ...more] = rest;
      const computerId = id === undefined ? null : parseComputerId(id);
      if (computerId === null || more.length > 0) throw new UsageError('pin-reset needs one computer id (a whole number >= 0)');
      return { url, json, command: { kind: 'pin-reset', computerId, allowOldKey } };
    }
    case 'call': {
      const [tool, ...args] = rest;
      if (!tool) throw new UsageError('call needs a tool name; cc-mcp tools lists them');
      return { url, json, command: { kind: 'call', tool, args: parseCallArgs(args) } };
    }
    case 'exec':
      return { url, json, command: parseExec(rest) };
    default:
      throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  }
}

/** Turns key=value pairs into arguments: a value is a string where the schema says string, else JSON if it parses. */
export function pairsToArgs(pairs: Extract<CallArgs, { pairs: unknown }>['pairs'], properties: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  // an own property whatever the key: `args[key] =` with "__proto__" set the object's prototype
  // instead, so the argument was silently not sent (and "constructor" found Object's own schema-less slot)
  const put = (key: string, value: unknown) => void Object.defineProperty(args, key, { value, enumerable: true, writable: true, configurable: true });
  for (const { key, value, raw } of pairs) {
    const schema = (Object.hasOwn(properties, key) ? properties[key] : undefined) as { type?: unknown } | undefined;
    const types = schema?.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
    if (raw) {
      try {
        put(key, JSON.parse(value));
      } catch {
        throw new UsageError(`${key}:= needs a JSON value, got ${JSON.stringify(value)}`);
      }
    } else if (types.length === 1 && types[0] === 'string') {
      put(key, value);
    } else {
      try {
        put(key, JSON.parse(value));
      } catch {
        put(key, value);
      }
    }
  }
  return args;
}

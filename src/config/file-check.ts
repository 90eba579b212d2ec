// The parsed CC_CONFIG file checked (pure): each entry of `tools`, `servers` and `endpoints`, then
// what spans entries (duplicate names and ids, a tool name in a server's namespace). Every problem is
// collected, each naming its JSON path and what is wrong; file.ts reads the file and its JSON.
import { isRecord } from '../jsonrpc/message.js';
import type { Schema } from '../tools/schema.js';
import { schemaProblems } from './schema-check.js';
import { collector, duplicates, kind, list, string, stringMap, unknownKeys, type Check } from './checks.js';
import { ConfigFileError, MAX_LUA_BYTES, MAX_TOOL_TIMEOUT_MS, SERVER_ID, TOOL_NAME, type EndpointConfig, type FileConfig, type HttpServerConfig, type LuaTarget, type LuaToolConfig, type Problem, type ServerConfig, type StdioServerConfig } from './file-shape.js';

const KNOWN_TOP = ['tools', 'servers', 'endpoints'];
const TOOL_KEYS = ['name', 'title', 'description', 'inputSchema', 'target', 'lua', 'timeoutMs', 'annotations'];
const STDIO_KEYS = ['id', 'command', 'args', 'env', 'cwd', 'timeoutMs'];
const HTTP_KEYS = ['id', 'url', 'headers', 'timeoutMs'];

function timeout(value: unknown, path: string, fail: Check): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TOOL_TIMEOUT_MS) {
    fail(`must be a whole number of milliseconds from 1 to ${MAX_TOOL_TIMEOUT_MS}`, path);
    return undefined;
  }
  return value;
}

function target(value: unknown, path: string, fail: Check): LuaTarget | undefined {
  if (value === 'argument') return 'argument';
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'computerId') {
      const id = value.computerId;
      if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return { computerId: id };
      fail('must be a whole number >= 0', `${path}.computerId`);
      return undefined;
    }
    if (keys.length === 1 && keys[0] === 'label') {
      const label = string(value.label, `${path}.label`, fail);
      return label === undefined ? undefined : { label };
    }
  }
  fail('must be {"computerId": <number>}, {"label": "<label>"} or "argument"', path);
  return undefined;
}

const TARGET_ARGUMENTS: Record<string, Schema> = {
  computerId: { type: 'integer', minimum: 0, description: 'id of the target computer (os.getComputerID())' },
  computer: { type: 'string', minLength: 1, description: 'label of the target computer; must match exactly one linked computer' },
};

function inputSchema(value: unknown, path: string, fail: Check, argument: boolean, tool?: string): Schema {
  let schema: Schema = { type: 'object', properties: {} };
  if (value !== undefined) {
    if (!isRecord(value)) fail(`must be a JSON Schema object, got ${kind(value)}`, path);
    else if (value.type !== 'object') fail('must have "type": "object" (tool arguments are an object)', `${path}.type`);
    else {
      // only keywords the bridge enforces: a constraint shown to clients is never unchecked
      const before = fail.count;
      schemaProblems(value, path, fail, { depth: 0, property: true, headers: new Map(), tool });
      if (fail.count === before) schema = value as Schema;
    }
  }
  if (!argument) return schema;
  const properties = { ...(schema.properties ?? {}) };
  for (const name of Object.keys(TARGET_ARGUMENTS)) {
    if (name in properties) fail(`"${name}" is added for target "argument"; choose another property name`, `${path}.properties.${name}`);
  }
  return { ...schema, properties: { ...properties, ...TARGET_ARGUMENTS } };
}

function luaTool(value: unknown, path: string, fail: Check): LuaToolConfig | undefined {
  if (!isRecord(value)) {
    fail(`must be an object, got ${kind(value)}`, path);
    return undefined;
  }
  unknownKeys(value, TOOL_KEYS, path, fail);
  const before = fail.count;
  const name = string(value.name, `${path}.name`, fail);
  if (name !== undefined && !TOOL_NAME.test(name)) fail('must be 1-64 characters of A-Z a-z 0-9 _ -', `${path}.name`);
  const title = value.title === undefined ? name : string(value.title, `${path}.title`, fail);
  const description = value.description === undefined ? '' : string(value.description, `${path}.description`, fail, { empty: true });
  const where = target(value.target, `${path}.target`, fail);
  const schema = inputSchema(value.inputSchema, `${path}.inputSchema`, fail, where === 'argument', name);
  const lua = string(value.lua, `${path}.lua`, fail);
  if (lua !== undefined && Buffer.byteLength(lua) > MAX_LUA_BYTES) fail(`is ${Buffer.byteLength(lua)} bytes; at most ${MAX_LUA_BYTES}`, `${path}.lua`);
  const timeoutMs = timeout(value.timeoutMs, `${path}.timeoutMs`, fail);
  if (value.annotations !== undefined && !isRecord(value.annotations)) fail(`must be an object, got ${kind(value.annotations)}`, `${path}.annotations`);
  if (fail.count !== before) return undefined;
  const tool: LuaToolConfig = {
    name: name as string,
    title: title as string,
    description: description as string,
    inputSchema: schema,
    target: where as LuaTarget,
    lua: lua as string,
  };
  if (timeoutMs !== undefined) tool.timeoutMs = timeoutMs;
  if (value.annotations !== undefined) tool.annotations = value.annotations as Record<string, unknown>;
  return tool;
}

function server(value: unknown, path: string, fail: Check): ServerConfig | undefined {
  if (!isRecord(value)) {
    fail(`must be an object, got ${kind(value)}`, path);
    return undefined;
  }
  const before = fail.count;
  const id = string(value.id, `${path}.id`, fail);
  if (id !== undefined && !SERVER_ID.test(id)) {
    fail('must be 1-32 characters of A-Z a-z 0-9 _ -, start with a letter or digit, not end with "_" and not contain "__"', `${path}.id`);
  }
  const timeoutMs = timeout(value.timeoutMs, `${path}.timeoutMs`, fail);
  const hasCommand = 'command' in value;
  const hasUrl = 'url' in value;
  if (hasCommand === hasUrl) {
    fail('needs exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)', path);
    return undefined;
  }
  if (hasCommand) {
    unknownKeys(value, STDIO_KEYS, path, fail);
    const command = string(value.command, `${path}.command`, fail);
    let args: string[] = [];
    if (value.args !== undefined) {
      if (!Array.isArray(value.args)) fail(`must be an array of strings, got ${kind(value.args)}`, `${path}.args`);
      else {
        value.args.forEach((a, i) => {
          if (typeof a !== 'string') fail(`must be a string, got ${kind(a)}`, `${path}.args[${i}]`);
        });
        args = value.args as string[];
      }
    }
    const env = stringMap(value.env, `${path}.env`, fail);
    const cwd = value.cwd === undefined ? undefined : string(value.cwd, `${path}.cwd`, fail);
    if (fail.count !== before) return undefined;
    const stdio: StdioServerConfig = { id: id as string, command: command as string, args, env };
    if (cwd !== undefined) stdio.cwd = cwd;
    if (timeoutMs !== undefined) stdio.timeoutMs = timeoutMs;
    return stdio;
  }
  unknownKeys(value, HTTP_KEYS, path, fail);
  const url = string(value.url, `${path}.url`, fail);
  if (url !== undefined) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) fail('must be an http:// or https:// URL', `${path}.url`);
    // fetch refuses such a URL on every request, and its error quoted the URL, password and all
    else if (parsed.username !== '' || parsed.password !== '') fail('must not hold a user or password (fetch refuses such URLs); send them in "headers", e.g. {"authorization": "Basic <base64 of user:password>"}', `${path}.url`);
  }
  const headers = stringMap(value.headers, `${path}.headers`, fail);
  if (fail.count !== before) return undefined;
  const http: HttpServerConfig = { id: id as string, url: url as string, headers };
  if (timeoutMs !== undefined) http.timeoutMs = timeoutMs;
  return http;
}

function endpoint(value: unknown, path: string, fail: Check): EndpointConfig | undefined {
  if (!isRecord(value)) {
    fail(`must be an object, got ${kind(value)}`, path);
    return undefined;
  }
  unknownKeys(value, ['path', 'tool'], path, fail);
  const before = fail.count;
  const p = string(value.path, `${path}.path`, fail);
  if (p !== undefined && !p.startsWith('/')) fail('must start with "/"', `${path}.path`);
  const tool = string(value.tool, `${path}.tool`, fail);
  if (fail.count !== before) return undefined;
  return { path: p as string, tool: tool as string };
}

/** Validates a parsed JSON value; throws ConfigFileError listing every problem. */
export function parseFileConfig(value: unknown, file: string): FileConfig {
  const problems: Problem[] = [];
  // item parsers compare fail.count before and after to tell whether their own checks failed
  const fail = collector(problems);
  if (!isRecord(value)) throw new ConfigFileError(file, [{ path: '$', message: `must be a JSON object, got ${kind(value)}` }]);
  unknownKeys(value, KNOWN_TOP, '$', fail);
  const tools = list(value.tools, '$.tools', fail, luaTool);
  const servers = list(value.servers, '$.servers', fail, server);
  const endpoints = list(value.endpoints, '$.endpoints', fail, endpoint);
  duplicates(tools.map((t) => ({ value: t.item.name, path: `${t.path}.name` })), 'tool name', fail);
  duplicates(servers.map((s) => ({ value: s.item.id, path: `${s.path}.id` })), 'server id', fail);
  for (const { item: t, path } of tools) {
    for (const { item: s } of servers) {
      if (t.name.startsWith(`${s.id}__`)) {
        fail(`tool name ${JSON.stringify(t.name)} starts with "${s.id}__", which names the tools of server "${s.id}"`, `${path}.name`);
      }
    }
  }
  if (problems.length) throw new ConfigFileError(file, problems);
  return { tools: tools.map((t) => t.item), servers: servers.map((s) => s.item), endpoints: endpoints.map((e) => e.item) };
}


// GET /openapi.json: an OpenAPI 3.1 document built from the live tool registry at request time.
// One POST /tools/<name> per offered tool (operationId = the tool name), plus the config aliases
// and the two list routes. Tool schemas are JSON Schema, which OpenAPI 3.1 takes as they are.
import type { Schema } from '../tools/schema.js';
import type { Tool } from '../tools/tool.js';
import { COMPUTER_SCHEMA } from '../tools/list-computers.js';
import type { EndpointAlias } from './endpoints.js';

export interface OpenApiInfo {
  version: string;
  /** Base URL of the REST routes, e.g. http://127.0.0.1:3000; omitted: relative to the document. */
  serverUrl?: string;
}

const json = (schema: unknown) => ({ 'application/json': { schema } });
const ref = (kind: 'schemas' | 'responses', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Error responses of a tool call, by status: [component name, description, codes]. */
const CALL_ERRORS: ReadonlyArray<[string, string, string, string[]]> = [
  ['400', 'BadRequest', 'The body is not JSON, or not a JSON object', ['invalid_json', 'invalid_body']],
  ['403', 'Disabled', 'The tool is disabled on this bridge', ['disabled']],
  ['404', 'NotFound', 'No such tool, or no (or more than one) linked computer matches', ['unknown_tool', 'unknown_computer']],
  ['413', 'TooLarge', 'The body exceeds MCP_MAX_BODY_BYTES', ['body_too_large']],
  ['422', 'InvalidArguments', 'The arguments do not match the input schema; the message names the argument', ['invalid_arguments']],
  ['429', 'RateLimited', 'The caller started more tool calls than MCP_CALL_RATE allows (with Retry-After)', ['rate_limited']],
  ['500', 'Internal', 'The bridge failed; nothing internal is disclosed', ['internal']],
  ['503', 'Unavailable', 'The link to the computer dropped, the upstream server is down, or the bridge is at MCP_MAX_CONCURRENT_CALLS (busy, with Retry-After)', ['unavailable', 'cancelled', 'busy']],
  ['504', 'Timeout', 'No answer in time; the computer was told to stop', ['timeout']],
];

function components(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [, name, description, codes] of CALL_ERRORS) {
    responses[name] = {
      description: `${description} (error.code: ${codes.join(', ')})`,
      content: json(ref('schemas', 'Error')),
    };
  }
  responses.MethodNotAllowed = { description: 'Wrong HTTP method; the Allow header lists the right ones', content: json(ref('schemas', 'Error')) };
  return {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'Only when the bridge is configured to require a token' },
    },
    schemas: {
      Error: {
        type: 'object',
        properties: {
          error: {
            type: 'object',
            properties: { code: { type: 'string', description: 'stable machine-readable code' }, message: { type: 'string' } },
            required: ['code', 'message'],
          },
        },
        required: ['error'],
      },
      ContentBlock: {
        type: 'object',
        description: 'An MCP content block: {"type": "text", "text": ...}, or image, audio, resource ...',
        properties: { type: { type: 'string' }, text: { type: 'string' } },
        required: ['type'],
      },
      // list-computers' entry (one definition for both) plus the address the computer dialled from
      Computer: {
        ...COMPUTER_SCHEMA,
        properties: { ...COMPUTER_SCHEMA.properties, remoteAddress: { type: 'string' } },
        required: [...COMPUTER_SCHEMA.required, 'remoteAddress'],
      },
      ToolInfo: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          title: { type: 'string' },
          description: { type: 'string' },
          inputSchema: { type: 'object' },
          outputSchema: { type: 'object' },
        },
        required: ['name', 'title', 'description', 'inputSchema'],
      },
    },
    responses,
  };
}

function callOperation(tool: Tool, operationId: string, summary: string): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    '200': {
      description:
        'The tool ran. isError true means it ran and the computer or upstream server answered with an error; content says what.',
      content: json({
        type: 'object',
        properties: {
          content: { type: 'array', items: ref('schemas', 'ContentBlock') },
          structuredContent: tool.outputSchema ?? { type: 'object' },
          isError: { type: 'boolean' },
        },
        required: ['content', 'isError'],
      }),
    },
  };
  for (const [status, name] of CALL_ERRORS) responses[status] = ref('responses', name);
  responses['405'] = ref('responses', 'MethodNotAllowed');
  return {
    operationId,
    summary,
    description: tool.description,
    requestBody: {
      description: "The tool's arguments; an empty body means {}",
      required: false,
      content: json(tool.inputSchema satisfies Schema),
    },
    responses,
  };
}

function listOperation(operationId: string, summary: string, item: string): Record<string, unknown> {
  return {
    get: {
      operationId,
      summary,
      responses: {
        '200': { description: summary, content: json({ type: 'array', items: ref('schemas', item) }) },
        '405': ref('responses', 'MethodNotAllowed'),
      },
    },
  };
}

/** The document for the tools offered now; `aliases` whose tool is not offered are left out. */
export function openApiDocument(tools: readonly Tool[], aliases: readonly EndpointAlias[], info: OpenApiInfo): Record<string, unknown> {
  const names = new Set(tools.map((t) => t.name));
  const unique = (id: string) => (names.has(id) ? `bridge.${id}` : id);
  const paths: Record<string, unknown> = {
    '/tools': listOperation(unique('listTools'), 'The tools this bridge offers', 'ToolInfo'),
    '/computers': listOperation(unique('listComputers'), 'The computers linked now', 'Computer'),
  };
  for (const tool of tools) {
    paths[`/tools/${encodeURIComponent(tool.name)}`] = { post: callOperation(tool, tool.name, tool.title) };
  }
  const byName = new Map(tools.map((t) => [t.name, t]));
  const taken = new Set<string>([...names, unique('listTools'), unique('listComputers')]);
  for (const alias of aliases) {
    const tool = byName.get(alias.tool);
    if (!tool) continue;
    let id = `alias${alias.path.replace(/[^A-Za-z0-9]+/g, '_')}`;
    while (taken.has(id)) id += '_';
    taken.add(id);
    paths[alias.path] = { post: callOperation(tool, id, `${tool.title} (alias of POST /tools/${tool.name})`) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'cc-mcp-bridge REST',
      version: info.version,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Every tool of the bridge as a plain REST endpoint. Errors are {"error": {"code", "message"}} with a stable code. ' +
        'Closing the connection cancels the call.',
    },
    servers: [{ url: info.serverUrl ?? '/' }],
    // no credentials, or a bearer token where the operator configured one
    security: [{}, { bearer: [] }],
    paths,
    components: components(),
  };
}

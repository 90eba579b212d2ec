// cc-mcp's text output: tool results read like the tool's own text; other content is named.
import { isRecord } from '../jsonrpc/message.js';
import { plural } from '../plural.js';
import { shownText } from '../jsonrpc/quote.js';

// What names a thing (a tool's name and title, a content block's type, MIME type or URI: an upstream
// server chooses them) is shown with control characters escaped, so none reaches the terminal as a
// control sequence (ESC [2J clears it) or a line break. A tool's text is its output and stays as sent.
const shown = (value: unknown): string => shownText(String(value));

function block(item: unknown): string {
  if (!isRecord(item)) return `[${shown(JSON.stringify(item))}]`;
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : '';
    case 'image':
    case 'audio': {
      const bytes = typeof item.data === 'string' ? Math.floor((item.data.length * 3) / 4) : 0;
      return `[${item.type} ${shown(item.mimeType ?? 'unknown type')}, about ${plural(bytes, 'byte')}]`;
    }
    case 'resource_link':
      return `[resource ${shown(item.uri)}]`;
    case 'resource': {
      const resource = isRecord(item.resource) ? item.resource : {};
      return typeof resource.text === 'string' ? resource.text : `[resource ${shown(resource.uri)}]`;
    }
    default:
      return `[${shown(item.type)} content]`;
  }
}

// C0 controls but tab and line feed (a carriage return only where it ends a line: CRLF files), DEL and
// the C1 controls (U+009B is CSI to some terminals).
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g;

/**
 * `text` safe to write to a terminal: control characters as \uXXXX escapes, lines and tabs kept. For
 * what cc-mcp prints to a terminal that a computer or an upstream server chose (a program's output,
 * a file's text, an error): ESC [2J clears the screen, OSC 52 writes the clipboard in many terminals,
 * and some answer queries by typing into the shell. CC itself never interprets them (its terminal
 * draws no escape sequences), so no program's output loses anything meant for a screen.
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The text of a tools/call result: its content blocks, or its structuredContent when it has none. */
export function renderResult(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length === 0) return result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent, null, 2);
  return content.map(block).join('\n');
}

/** One line per tool: its name, padded, then its title. */
export function renderTools(tools: ReadonlyArray<Record<string, unknown>>): string {
  const names = tools.map((t) => shown(t.name));
  const width = Math.max(0, ...names.map((name) => name.length));
  return tools
    .map((t, i) => {
      const title = typeof t.title === 'string' ? t.title : typeof t.description === 'string' ? t.description.split('. ')[0] : '';
      return `${(names[i] as string).padEnd(width)}  ${shownText(title as string)}`.trimEnd();
    })
    .join('\n');
}

export function renderHealth(body: Record<string, unknown>): string {
  // with MCP_AUTH_TOKEN, /health says only {"ok": true} to a request without a valid token
  if (typeof body.computers !== 'number') return 'bridge is up (it says more with a valid token: set CC_MCP_TOKEN to one of its MCP_AUTH_TOKEN tokens)';
  const link = body.link as { state?: unknown; reason?: unknown } | undefined;
  const waiting = link?.state === 'waiting' && typeof link.reason === 'string' ? `; no computer can link: ${link.reason}` : '';
  return `bridge is up; ${body.computers} computer${body.computers === 1 ? '' : 's'} linked${waiting}${upstreams(body.servers)}`;
}

/**
 * The CC_CONFIG upstream servers of /health: how many are up, and each one that is not, with why
 * (its reason comes from the server or the network, so it is shown escaped). Before, `cc-mcp health`
 * said nothing of them, and a server down since the start (its tools missing from `cc-mcp tools`)
 * showed only in the bridge's log.
 */
function upstreams(servers: unknown): string {
  if (!Array.isArray(servers) || servers.length === 0) return '';
  const entries = servers.filter(isRecord);
  const up = entries.filter((s) => s.state === 'up').length;
  const notUp = entries
    .filter((s) => s.state !== 'up')
    .map((s) => `${shown(s.id)} ${shown(s.state)}${typeof s.reason === 'string' ? ` (${shown(s.reason)})` : ''}`);
  return `; upstream servers: ${up} of ${entries.length} up${notUp.length > 0 ? `, ${notUp.join(', ')}` : ''}`;
}

/** GET /pins (the pinned ids) or a reset's answer (its message). */
export function renderPins(body: Record<string, unknown>): string {
  if (typeof body.message === 'string') return body.message;
  const ids = Array.isArray(body.pinned) ? body.pinned : [];
  const mode = body.strict === true ? ' (CC_LINK_PIN=strict: only these link)' : '';
  const distrusted = Array.isArray(body.distrusted) && body.distrusted.length > 0 ? `; a reset distrusts the old key of: ${body.distrusted.join(' ')}` : '';
  return `${ids.length === 0 ? `no computer id is pinned${mode}` : `${plural(ids.length, 'computer id')} pinned${mode}: ${ids.join(' ')}`}${distrusted}`;
}

// A tools/call result as a 2025-03-26 client can read it. That revision's CallToolResult knows four
// content types (text, image, audio, resource); 2025-06-18 added `resource_link` blocks and
// `structuredContent`. An upstream server speaking a newer revision may answer with either, and a
// client that validates the 2025-03-26 schema (the TypeScript SDK of that time did) fails the whole
// result on a block type it does not know. Extra fields (title, _meta, structuredContent itself) are
// left: that revision's schema allows properties it does not name, and clients ignore them.
import { isRecord } from '../jsonrpc/message.js';
import type { ToolResult } from '../tools/tool.js';

/** The revision whose clients get results rewritten here. */
export const PRE_LINK_REVISION = '2025-03-26';

/** A resource_link block as a text block naming what it linked to (the client can still fetch the URI). */
function linkAsText(block: Record<string, unknown>): Record<string, unknown> {
  const str = (key: string) => (typeof block[key] === 'string' && block[key] !== '' ? (block[key] as string) : undefined);
  const name = str('name') ?? str('uri') ?? 'unnamed';
  const title = str('title');
  const details = [str('mimeType'), typeof block.size === 'number' ? `${block.size} bytes` : undefined].filter(Boolean);
  let text = `Resource link: ${title && title !== name ? `${title} (${name})` : name} at ${str('uri') ?? '(no URI)'}`;
  if (details.length > 0) text += ` [${details.join(', ')}]`;
  const description = str('description');
  if (description) text += `: ${description}`;
  const converted: Record<string, unknown> = { type: 'text', text };
  if (isRecord(block.annotations)) converted.annotations = block.annotations;
  return converted;
}

/**
 * `result` as a 2025-03-26 client gets it: each resource_link block becomes a text block saying its
 * name, URI, MIME type and description (annotations kept); a result whose only data is
 * structuredContent (no content block) also gets that data as JSON text, as 2025-06-18 asks servers
 * to do for older clients. The same object when nothing needs rewriting (every built-in tool).
 */
export function forPreLinkClient(result: ToolResult): ToolResult {
  const content = result.content as unknown[];
  if (!Array.isArray(content)) return result;
  if (content.length === 0) {
    if (!isRecord(result.structuredContent)) return result;
    return { ...result, content: [{ type: 'text', text: JSON.stringify(result.structuredContent) }] } as ToolResult;
  }
  let i = 0;
  while (i < content.length && !(isRecord(content[i]) && (content[i] as Record<string, unknown>).type === 'resource_link')) i++;
  if (i === content.length) return result;
  const rewritten = content.map((block) => (isRecord(block) && block.type === 'resource_link' ? linkAsText(block) : block));
  return { ...result, content: rewritten } as ToolResult;
}

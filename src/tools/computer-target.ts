// Which linked computer a tool call names: "computerId" or an exact "computer" label.
import { describe, type Link, type LinkRegistry } from '../link/registry.js';
import { failedResult, type ToolResult } from './tool.js';
import { quoteValue } from '../jsonrpc/quote.js';

export function linkedList(links: LinkRegistry): string {
  const linked = links.list();
  if (linked.length === 0) return links.none('No computers are linked.');
  return `Linked computers: ${linked.map((l) => describe(l.computerId, l.label)).join(', ')}.`;
}

/**
 * The answer of a tool listing computers when none is linked. While none can link (another process
 * holds the link port) structuredContent says why as well (`note`): Claude Code hands the model that
 * JSON, not the text.
 */
export function noComputers(links: LinkRegistry, sentence: string): ToolResult {
  const text = links.none(sentence);
  return { content: [{ type: 'text', text }], structuredContent: links.unreachable === null ? { computers: [] } : { computers: [], note: text } };
}

/** Where a tool listing computers declares `note` (see noComputers). */
export const NOTE_SCHEMA = { type: 'string', description: 'only when no computer can link now: why (the link port is held by another process); in list-computers also when the answer reached MCP_LIST_COMPUTERS_MAX_CHARS: which computers are listed without peripherals and jobs, or not at all' } as const;

/**
 * A label that is the id of a linked computer ("computer": "12", or cc-mcp's computer=12): the caller
 * most likely meant the id. Before, only "No linked computer has the label "12". Linked computers: 12
 * (Label: base-turtle).", which a model (or a user) read as a contradiction.
 */
function idAsLabel(links: LinkRegistry, label: unknown): string {
  if (typeof label !== 'string' || !/^(0|[1-9]\d{0,9})$/.test(label)) return '';
  const id = Number(label);
  return links.get(id) ? ` "computer" names a computer by its label; for computer ${id} by its id, give "computerId": ${id}.` : '';
}

/** Finds the one computer the arguments name, or says why not (a string: no such computer). */
export function findComputer(links: LinkRegistry, args: Record<string, unknown>): Link | string | ToolResult {
  const hasId = args.computerId !== undefined;
  const hasLabel = args.computer !== undefined;
  if (hasId && hasLabel) return failedResult(`Give either "computerId" or "computer", not both. ${linkedList(links)}`, 'invalid_arguments');
  if (hasId) {
    return links.get(args.computerId as number) ?? `No linked computer has id ${args.computerId}.`;
  }
  if (hasLabel) {
    const matches = links.list().filter((l) => l.label === args.computer);
    // a pinned computer that is away still holds its label: another one saying it is not taken for it
    const away = typeof args.computer === 'string' ? links.awayWithLabel(args.computer) : [];
    if (matches.length === 1 && away.length === 0) return matches[0] as Link;
    if (matches.length === 0 && away.length === 0) return `No linked computer has the label ${quoteValue(args.computer)}.${idAsLabel(links, args.computer)}`;
    if (matches.length === 0) {
      return `No linked computer has the label ${quoteValue(args.computer)}: pinned computer${away.length === 1 ? '' : 's'} ${away.join(', ')}, which had it, ${away.length === 1 ? 'is' : 'are'} not linked now.`;
    }
    if (away.length === 0) {
      return `The label ${quoteValue(args.computer)} matches ${matches.length} computers (ids ${matches
        .map((l) => l.computerId)
        .join(', ')}); use "computerId".`;
    }
    const ids = away.join(', ');
    return `The label ${quoteValue(args.computer)} is held by pinned computer${away.length === 1 ? '' : 's'} ${ids}, not linked now, and said by linked computer${matches.length === 1 ? '' : 's'} ${matches
      .map((l) => l.computerId)
      .join(', ')}; use "computerId". If computer ${away[0]} is gone for good, the bridge's operator forgets its pin (and label) with: cc-mcp pin-reset ${away[0]}.`;
  }
  return failedResult(`Say which computer: "computerId" (a number) or "computer" (an exact label). ${linkedList(links)}`, 'invalid_arguments');
}


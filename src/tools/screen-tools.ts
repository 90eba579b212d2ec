// read-screen and send-input (issue 11 part B): the player's shell as the agent sees and types into
// it, in background mode. In foreground mode the computer answers that there is no shell to read.
import { isRecord } from '../jsonrpc/message.js';
import { malformed } from './files.js';
import { answerSchema, callMethod, safeTool } from './safe-tool.js';
import { failedResult, textResult } from './tool.js';

export const MAX_INPUT_TEXT = 4096;
export const MAX_INPUT_KEYS = 64;

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
/** A whole number JSON can carry: what the outputSchemas' "integer" fields promise clients (1.5, 1e999 are not). */
const whole = (v: unknown): v is number => Number.isSafeInteger(v);

export const readScreen = safeTool({
  name: 'read-screen',
  title: 'Read the screen',
  description:
    "What the player sees of the shell on the computer's screen in background mode: each row's text, the cursor position and " +
    "size, and each row's colours as CC's blit strings (0-f per character, as term.blit takes them).",
  properties: {},
  outputSchema: answerSchema({
    width: { type: 'integer' },
    height: { type: 'integer' },
    cursorX: { type: 'integer' },
    cursorY: { type: 'integer' },
    cursorBlink: { type: 'boolean' },
    lines: { type: 'array', items: { type: 'string' } },
    foreground: { type: 'array', items: { type: 'string' } },
    background: { type: 'array', items: { type: 'string' } },
  }, ['cursorBlink']),
  readOnly: true,
  async run(link, _args, ctx) {
    const answer = await callMethod(ctx, link, 'read-screen', {});
    if (!answer.ok) return answer.error;
    const r = answer.result;
    if (
      !isRecord(r) || !whole(r.width) || !whole(r.height) || !whole(r.cursorX) || !whole(r.cursorY) ||
      (r.cursorBlink !== undefined && typeof r.cursorBlink !== 'boolean') || !strings(r.lines) || !strings(r.foreground) || !strings(r.background)
    ) {
      return malformed(link, 'read-screen', 'expected {width, height, cursorX, cursorY, lines, foreground, background}');
    }
    const rows = r.lines.map((l) => l.replace(/ +$/, ''));
    while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
    const blink = r.cursorBlink === true ? ', blinking' : '';
    const text = `${rows.join('\n')}\n[screen ${r.width}x${r.height}, cursor at column ${r.cursorX}, row ${r.cursorY}${blink}]`;
    // the computer's own fields after computerId: a computer cannot name another one here
    return { ...textResult(text), structuredContent: { ...r, computerId: link.computerId } };
  },
});

export const sendInput = safeTool({
  name: 'send-input',
  title: 'Type into the shell',
  description:
    'Queue keyboard input for the player\'s shell in background mode, as the events CC queues: "text" as char events ' +
    '("\\n" presses enter), or as one paste event with paste:true; then "keys" in order: names from CC\'s keys API ' +
    '(enter, backspace, up, down, left, right, tab, home, delete, a, f1 ...) and combinations like "ctrl+c"; "ctrl+t" ' +
    'sends terminate. Follow with read-screen to see the effect. On an advanced computer CC gives keys to the focused ' +
    'tab only: when another tab than the shell has the focus the call fails and says to switch back to the shell tab.',
  properties: {
    text: { type: 'string', maxLength: MAX_INPUT_TEXT, description: 'text to type' },
    paste: { type: 'boolean', description: 'deliver "text" as one paste event instead of typing it' },
    keys: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, description: `keys to press after the text (at most ${MAX_INPUT_KEYS})` },
  },
  outputSchema: answerSchema({ queued: { type: 'integer' } }),
  readOnly: false,
  // a typed line ending in "\n" runs as any shell command would (delete, rm ...), like run-program
  destructive: true,
  async run(link, args, ctx) {
    const keys = (args.keys as string[] | undefined) ?? [];
    if ((args.text === undefined || args.text === '') && keys.length === 0) {
      return failedResult('Give "text" to type and/or "keys" to press.', 'invalid_arguments');
    }
    if (keys.length > MAX_INPUT_KEYS) return failedResult(`argument "keys" has ${keys.length} keys; at most ${MAX_INPUT_KEYS} are allowed.`, 'invalid_arguments');
    const params: Record<string, unknown> = { keys };
    if (args.text !== undefined) params.text = args.text;
    if (args.paste === true) params.paste = true;
    const answer = await callMethod(ctx, link, 'send-input', params);
    if (!answer.ok) return answer.error;
    const r = answer.result;
    if (!isRecord(r) || !whole(r.queued) || r.queued < 0) return malformed(link, 'send-input', 'expected {queued}');
    return { ...textResult(`Queued ${r.queued} input events.`), structuredContent: { computerId: link.computerId, queued: r.queued } };
  },
});

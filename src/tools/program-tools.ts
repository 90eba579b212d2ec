// run-program and check-lua (issue 11 part B): fixed methods of mcp-computer, no code sent to run.
import { isRecord } from '../jsonrpc/message.js';
import { MAX_CODE_BYTES } from './exec-lua.js';
import { fromResult } from './exec-result.js';
import { malformed } from './files.js';
import { startDetached, TIMEOUT_PROPERTY } from './job-tools.js';
import { answerSchema, callMethod, safeTool } from './safe-tool.js';
import { failedResult, textResult } from './tool.js';

export const MAX_COMMAND_LENGTH = 1024;

export const runProgram = safeTool({
  name: 'run-program',
  title: 'Run a program',
  description:
    'Run a command line through the computer\'s shell (shell.run, e.g. "ls rom", "gps locate", "refuel all") with its output ' +
    'captured; says whether it succeeded. A program that does not exist is an error ("No such program: <name>"). The program gets no keyboard (read() fails at once). On timeout or cancel the ' +
    'computer stops it at its next yield. detach:true answers at once with a job id instead (see job-status).',
  properties: {
    command: { type: 'string', minLength: 1, maxLength: MAX_COMMAND_LENGTH, description: 'the command line, as typed at the shell prompt' },
    timeoutMs: TIMEOUT_PROPERTY,
    detach: { type: 'boolean', description: 'run as a job that outlives this call; answers with its id at once' },
  },
  required: ['command'],
  outputSchema: answerSchema({
    success: { type: 'boolean' },
    output: { type: 'string' },
    truncated: { type: 'boolean' },
    job: { type: 'string' },
  }, ['job']),
  readOnly: false,
  destructive: true,
  async run(link, args, ctx) {
    if (args.detach === true) {
      const started = await startDetached('run-program', link, ctx, { command: args.command });
      const sc = started.structuredContent;
      if (!sc) return started;
      return { ...started, structuredContent: { computerId: sc.computerId, success: true, output: '', truncated: false, job: sc.job } };
    }
    const timeoutMs = (args.timeoutMs as number | undefined) ?? ctx.config.execTimeoutMs;
    const answer = await callMethod(ctx, link, 'run-program', { command: args.command }, timeoutMs, { cancelOnTimeout: true });
    if (!answer.ok) return answer.error;
    const parsed = fromResult(answer.result, ctx.config.execMaxResultValues);
    if (!parsed.ok) return malformed(link, 'run-program', parsed.problem);
    const { output, returns, truncated } = parsed.value;
    const first = returns[0];
    const success = isRecord(first) && first.value === true;
    const parts: string[] = [];
    if (output !== '') parts.push(output.replace(/\n$/, ''));
    parts.push(success ? '[program succeeded]' : '[program failed]');
    if (truncated) parts.push('[output was truncated to fit the link message limit]');
    return { ...textResult(parts.join('\n')), structuredContent: { computerId: link.computerId, success, output, truncated } };
  },
});

interface SyntaxError {
  line: number | null;
  message: string;
}

export const checkLua = safeTool({
  name: 'check-lua',
  title: 'Check Lua syntax',
  description:
    'Compile Lua on the computer without running it (load with an empty environment) and report the syntax error with its ' +
    'line, if any. Give "code", or "path" for a file on the computer.',
  properties: {
    code: { type: 'string', maxLength: MAX_CODE_BYTES, description: 'Lua source to compile' },
    path: { type: 'string', minLength: 1, maxLength: 4096, description: 'a file on the computer to compile instead' },
  },
  outputSchema: answerSchema({ ok: { type: 'boolean' }, errors: { type: 'array', items: { type: 'object' } } }, ['items']),
  readOnly: true,
  async run(link, args, ctx) {
    if ((args.code === undefined) === (args.path === undefined)) {
      return failedResult('Give either "code" (Lua source) or "path" (a file on the computer), not both or neither.', 'invalid_arguments');
    }
    const answer = await callMethod(ctx, link, 'check-lua', args.code !== undefined ? { code: args.code } : { path: args.path });
    if (!answer.ok) return answer.error;
    const r = answer.result;
    const errors = isRecord(r) && Array.isArray(r.errors) ? r.errors : null;
    if (!isRecord(r) || typeof r.ok !== 'boolean' || !errors) return malformed(link, 'check-lua', 'expected {ok, errors}');
    const list: SyntaxError[] = [];
    for (const e of errors) {
      if (!isRecord(e) || typeof e.message !== 'string' || !(e.line === null || e.line === undefined || typeof e.line === 'number')) {
        return malformed(link, 'check-lua', 'expected errors as [{line, message}]');
      }
      list.push({ line: typeof e.line === 'number' ? e.line : null, message: e.message });
    }
    const what = args.path !== undefined ? String(args.path) : 'the code';
    const text = r.ok ? `${what} compiles: no syntax errors.` : list.map((e) => `line ${e.line ?? '?'}: ${e.message}`).join('\n');
    return { ...textResult(text), structuredContent: { computerId: link.computerId, ok: r.ok, errors: list } };
  },
});

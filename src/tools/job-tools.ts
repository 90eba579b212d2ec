// Detached work (issue 11 part B): exec-lua and run-program with detach:true answer at once with a job
// id; the job keeps running on the computer (across link drops, not a reboot) with its output kept
// there. job-status reads it from a cursor and gives the result once done; job-cancel stops it.
import { describe, type Link } from '../link/registry.js';
import { isRecord } from '../jsonrpc/message.js';
import { fromResult, renderValue } from './exec-result.js';
import { malformed } from './files.js';
import { answerSchema, callMethod, safeTool, updateHint } from './safe-tool.js';
import type { Schema } from './schema.js';
import { failedResult, textResult, type ToolContext, type ToolResult } from './tool.js';
import { plural } from '../plural.js';

export const TIMEOUT_PROPERTY: Schema = {
  type: 'integer',
  minimum: 1,
  maximum: 300_000,
  description: 'how long to wait before cancelling (default CC_EXEC_TIMEOUT_MS, 10000)',
};

const JOB_STATES: ReadonlySet<unknown> = new Set(['running', 'done', 'failed', 'cancelled']);
const JOB_PROPERTY = { type: 'string', minLength: 1, maxLength: 128, description: 'job id (from exec-lua or run-program with detach:true)' } as const;

/**
 * Starts `method` detached: the computer answers at once with a job id. The answer has exec-lua's
 * structured shape (ok, output, returns, truncated) plus `job`, so exec-lua keeps one output schema.
 */
export async function startDetached(method: 'exec-lua' | 'run-program', link: Link, ctx: ToolContext, params: Record<string, unknown>): Promise<ToolResult> {
  const answer = await callMethod(ctx, link, method, { ...params, detach: true });
  if (!answer.ok) return answer.error;
  const r = answer.result;
  const who = describe(link.computerId, link.label);
  if (isRecord(r) && r.job === undefined && ('output' in r || 'returns' in r)) {
    // a program from before detach ran it to the end instead
    return failedResult(`computer ${who} ran the ${method} without detaching: its mcp-computer predates detach:true; ${updateHint(ctx.config.linkPort)}.`, 'tool_error');
  }
  if (!isRecord(r) || typeof r.job !== 'string' || r.job === '') return malformed(link, method, 'expected {job: "<id>"} for a detached start');
  const text =
    `Started job ${r.job} on computer ${who} (${method}, detached). It keeps running there; ` +
    `follow it with job-status {"computerId": ${link.computerId}, "job": "${r.job}", "cursor": 0} and stop it with job-cancel.`;
  return { ...textResult(text), structuredContent: { computerId: link.computerId, ok: true, output: '', returns: [], truncated: false, job: r.job } };
}

interface JobSummary {
  job: string;
  kind: string;
  what: string;
  state: string;
  outputBytes: number;
}

function summaryOf(v: unknown): JobSummary | null {
  if (!isRecord(v)) return null;
  const { job, kind, what, state, outputBytes } = v;
  if (typeof job !== 'string' || typeof kind !== 'string' || typeof what !== 'string' || !JOB_STATES.has(state) || typeof outputBytes !== 'number') return null;
  return { job, kind, what, state: state as string, outputBytes };
}

function renderStatus(s: JobSummary, r: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof r.output === 'string' && r.output !== '') parts.push(r.output.replace(/\n$/, ''));
  if (typeof r.skipped === 'number' && r.skipped > 0) parts.unshift(`[${plural(r.skipped, 'byte')} of older output ${r.skipped === 1 ? 'was' : 'were'} dropped on the computer]`);
  if (s.state === 'running') {
    if (typeof r.partial === 'string' && r.partial !== '') parts.push(`(line in progress: ${JSON.stringify(r.partial)})`);
  } else if (Array.isArray(r.returns)) {
    if (s.kind === 'run-program') {
      const ran = isRecord(r.returns[0]) && r.returns[0].value === true;
      if (s.state !== 'cancelled') parts.push(ran ? 'program succeeded' : 'program failed');
    } else if (r.returns.length > 0) {
      parts.push(`=> ${r.returns.map(renderValue).join(', ')}`);
    }
  }
  if (typeof r.error === 'string') parts.push(`error: ${r.error}`);
  const more = r.more === true ? '; more output is waiting: call again with this cursor' : '';
  parts.push(`[job ${s.job} (${s.kind}: ${s.what}): ${s.state}; cursor ${r.cursor}${more}]`);
  return parts.join('\n');
}

export const jobStatus = safeTool({
  name: 'job-status',
  title: 'Follow a detached job',
  description:
    'State and output of a detached job (exec-lua or run-program started with detach:true). Pass the "cursor" the last call ' +
    'returned to get only the output since then (the computer keeps the last 64 KiB); once the job ends the result comes ' +
    'with it. Without "job": every job the computer has (jobs survive link drops, not a reboot).',
  properties: {
    job: JOB_PROPERTY,
    cursor: { type: 'integer', minimum: 0, description: 'output offset to read from (0 = from the start; the last answer gives the next one)' },
  },
  outputSchema: answerSchema({
    jobs: { type: 'array', items: { type: 'object' } },
    job: { type: 'string' },
    state: { type: 'string' },
    output: { type: 'string' },
    cursor: { type: 'integer' },
    omitted: { type: 'integer' },
  }, ['jobs', 'job', 'state', 'output', 'cursor', 'omitted']),
  readOnly: true,
  async run(link, args, ctx) {
    const params: Record<string, unknown> = {};
    if (args.job !== undefined) params.job = args.job;
    if (args.cursor !== undefined) params.cursor = args.cursor;
    const answer = await callMethod(ctx, link, 'job-status', params);
    if (!answer.ok) return answer.error;
    const r = answer.result;
    const computerId = link.computerId;
    if (args.job === undefined) {
      const list = isRecord(r) && Array.isArray(r.jobs) ? r.jobs.map(summaryOf) : null;
      if (!list || list.some((j) => j === null)) return malformed(link, 'job-status', 'expected {jobs: [{job, kind, what, state, outputBytes}]}');
      const jobs = list as JobSummary[];
      // how many more the computer left out to fit its frame limit (mcp-computer sends the oldest first)
      const left = isRecord(r) ? r.omitted : undefined;
      const omitted = typeof left === 'number' && Number.isSafeInteger(left) && left > 0 ? left : 0;
      let text = jobs.length === 0 && omitted === 0
        ? `No jobs on computer ${describe(computerId, link.label)}.`
        : jobs.map((j) => `${j.job} ${j.kind} ${j.state} (${plural(j.outputBytes, 'byte')} of output): ${j.what}`).join('\n');
      if (omitted > 0) text += `${text === '' ? '' : '\n'}(${plural(omitted, 'more job')} left out to fit the frame limit)`;
      return { ...textResult(text), structuredContent: omitted > 0 ? { computerId, jobs, omitted } : { computerId, jobs } };
    }
    const s = summaryOf(r);
    if (!s || !isRecord(r) || typeof r.output !== 'string' || !Number.isSafeInteger(r.cursor)) {
      return malformed(link, 'job-status', 'expected {job, kind, what, state, outputBytes, output, cursor}');
    }
    if (r.returns !== undefined) {
      // a finished job's returned values: checked as exec-lua's are, before anything renders them
      const parsed = fromResult({ returns: r.returns }, ctx.config.execMaxResultValues);
      if (!parsed.ok) return malformed(link, 'job-status', parsed.problem);
    }
    // the computer's own fields after computerId: a computer cannot name another one here
    return { ...textResult(renderStatus(s, r)), structuredContent: { ...r, computerId } };
  },
});

export const jobCancel = safeTool({
  name: 'job-cancel',
  title: 'Cancel a detached job',
  description: 'Stop a detached job at its next yield (its output so far stays readable with job-status).',
  properties: { job: JOB_PROPERTY },
  required: ['job'],
  outputSchema: answerSchema({ job: { type: 'string' }, state: { type: 'string' } }),
  readOnly: false,
  async run(link, args, ctx) {
    const answer = await callMethod(ctx, link, 'job-cancel', { job: args.job });
    if (!answer.ok) return answer.error;
    const s = summaryOf(answer.result);
    if (!s) return malformed(link, 'job-cancel', 'expected {job, kind, what, state, outputBytes}');
    const text = s.state === 'cancelled' ? `Job ${s.job} is cancelled.` : `Job ${s.job} had already ended (${s.state}); nothing to cancel.`;
    return { ...textResult(text), structuredContent: { computerId: link.computerId, ...s } };
  },
});

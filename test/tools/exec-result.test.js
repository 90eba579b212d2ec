import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outcomeResult } from '../../dist/tools/exec-result.js';

const base = { computerId: 3, ok: true, output: '', returns: [], truncated: false };

test('outcomeResult: the text joins the output (one trailing newline dropped), values or error, and the truncation note', () => {
  const cases = [
    [{}, '(no output, nothing returned)'],
    [{ output: 'hi\n' }, 'hi'],
    [{ output: 'hi\n\n' }, 'hi\n'],
    [{ output: '\n' }, ''],
    [{ output: 'a\nb' }, 'a\nb'],
    [{ returns: [{ type: 'number', value: 1 }, { type: 'nil' }] }, '=> 1, nil'],
    [{ output: 'x\n', returns: [{ type: 'string', value: 's' }] }, 'x\n=> "s"'],
    [{ output: '\n', returns: [{ type: 'boolean', value: true }] }, '\n=> true'],
    [{ truncated: true }, '(no output, nothing returned)\n[output or returned values were truncated to fit the link message limit]'],
    [{ output: 'o', truncated: true }, 'o\n[output or returned values were truncated to fit the link message limit]'],
    [{ ok: false, error: 'boom' }, 'error: boom'],
    [{ ok: false, output: 'before\n', error: 'boom', truncated: true }, 'before\nerror: boom\n[output or returned values were truncated to fit the link message limit]'],
    [{ ok: false, output: 'p', returns: [{ type: 'number', value: 2 }], error: 'e' }, 'p\nerror: e'],
  ];
  for (const [change, text] of cases) {
    const outcome = { ...base, ...change };
    const result = outcomeResult(outcome);
    assert.equal(result.content[0].text, text, JSON.stringify(change));
    assert.deepEqual(Object.keys(result), outcome.ok ? ['content', 'structuredContent'] : ['content', 'isError', 'structuredContent']);
    assert.deepEqual(result.content, [{ type: 'text', text }]);
    assert.equal(result.isError, outcome.ok ? undefined : true);
    assert.deepEqual(result.structuredContent, outcome);
    assert.deepEqual(Object.keys(result.structuredContent), Object.keys(outcome));
  }
});

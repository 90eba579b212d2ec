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

test('okResult is outcomeResult of a finished run, with its JSON written: byte for byte what JSON.stringify writes of it', async () => {
  const { okResult } = await import('../../dist/tools/exec-result.js');
  const { writtenText } = await import('../../dist/jsonrpc/written.js');
  const outputs = ['', 'hi\n', '\n', 'a"b\\c\n', 'tab\there', '\u0000\u001f\u007f', '\u2028\u2029', 'é ☃ \ud83d\ude00', '\ud800 lone', 'x\udc00', '</script>'];
  for (let c = 0; c < 0x10000; c += 37) outputs.push(`o${String.fromCharCode(c)}`);
  const returnsList = [
    [],
    [{ type: 'nil' }],
    [{ type: 'number', value: 1.5 }, { type: 'string', value: 'a"\n\ud800' }],
    [{ type: 'table', value: { toJSON: 'not a function', __proto__: 1, nested: [1, { b: null }] }, truncated: true }],
    [{ type: 'string', base64: '/w==' }, { type: 'function', repr: 'function: 0x1' }],
  ];
  let n = 0;
  for (const output of outputs) {
    for (const returns of returnsList) {
      for (const truncated of [false, true]) {
        const computerId = n++ % 3 === 0 ? 0 : 2 ** 31 + n;
        const result = okResult(computerId, output, returns, truncated);
        const plain = outcomeResult({ computerId, ok: true, output, returns, truncated });
        assert.deepEqual(Object.keys(result), Object.keys(plain));
        assert.deepEqual(result.content, plain.content);
        assert.deepEqual(result.structuredContent, plain.structuredContent);
        assert.deepEqual(Object.keys(result.structuredContent), Object.keys(plain.structuredContent));
        assert.equal(writtenText(result), JSON.stringify(result), JSON.stringify({ output, returns, truncated }));
      }
    }
  }
});

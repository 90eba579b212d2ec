// LogBudget's window and budgetedLogger's per-level budgets at their edges (found by mutation testing:
// a window of 999 ms, or one budget shared by every level, passed every test). Clocks injected or
// mocked: nothing here waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogBudget, budgetedLogger } from '../dist/log-budget.js';

test('LogBudget: the second starts at its first line; 999 ms later the budget is still spent, at 1000 ms it is new', () => {
  let now = 500;
  const budget = new LogBudget(1, () => now);
  assert.equal(budget.take('a'), 'a');
  now = 1499;
  assert.equal(budget.take('b'), null);
  now = 1500;
  assert.equal(budget.take('c'), 'c (1 similar line suppressed)');
  now = 2499;
  assert.equal(budget.take('d'), null);
});

test('budgetedLogger: each level has its own budget, so warnings over theirs do not silence errors', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 0 });
  const lines = [];
  const log = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (m) => lines.push(`${level} ${m}`)]));
  const budgeted = budgetedLogger(log, 1);
  budgeted.warn('w1');
  budgeted.warn('w2');
  budgeted.error('e1');
  budgeted.info('i1');
  budgeted.debug('d1');
  budgeted.error('e2');
  assert.deepEqual(lines, ['warn w1', 'error e1', 'info i1', 'debug d1']);
  t.mock.timers.tick(1000);
  budgeted.warn('w3');
  budgeted.error('e3');
  assert.deepEqual(lines.slice(4), ['warn w3 (1 similar line suppressed)', 'error e3 (1 similar line suppressed)']);
});

// The log budget lives in src/log-budget.ts (the upstream servers' logs use it too).
export { LogBudget } from '../log-budget.js';

// The fixed-Lua tools of issue 11 part B, in the order tools/list shows them.
import { jobCancel, jobStatus } from './job-tools.js';
import { callPeripheral, listPeripherals } from './peripheral-tools.js';
import { checkLua, runProgram } from './program-tools.js';
import { readScreen, sendInput } from './screen-tools.js';
import type { Tool } from './tool.js';

export const PART_B_TOOLS: readonly Tool[] = [listPeripherals, callPeripheral, runProgram, checkLua, readScreen, sendInput, jobStatus, jobCancel];

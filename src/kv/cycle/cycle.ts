/**
 * The member cycle's old import path: the operation is upgrade/cycle.ts now (the upgrade's executor runs
 * its members through it, and the upgrade room cannot import a room after it). The v2store fix
 * (ladder/v2store-fix.ts) still imports it from here; once that import names upgrade/cycle.js, this file goes.
 */
export * from '../upgrade/cycle.js';

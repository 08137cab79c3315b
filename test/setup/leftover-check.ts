/**
 * Setup file of every test file (vitest.config.ts `setupFiles`): no process a test file
 * starts outlives the file. Before the file, its process gets a mark that every process it
 * starts inherits (bench/kit/leftovers.ts); after the file's own afterAll hooks, every process the
 * launcher still knows is killed with its group, and any process that still carries the
 * mark fails the file, listed with its pid and command line, and is killed.
 */
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';
import { killAll } from '../../bench/kit/launcher.js';
import { MARK_VARIABLE, endLeftovers, leftoverMessage, newMark } from '../../bench/kit/leftovers.js';

const mark = newMark();
process.env[MARK_VARIABLE] = mark;

// Registered before the file's own hooks, so it runs after them (vitest runs after-hooks as a stack).
afterAll(async () => {
  const path = expect.getState().testPath;
  const file = path === undefined ? 'this test file' : relative(process.cwd(), path);
  const left = await endLeftovers(mark);
  await killAll();
  if (left.length > 0) throw new Error(leftoverMessage(file, left));
});

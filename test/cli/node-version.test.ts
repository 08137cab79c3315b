/**
 * The bin checks the Node version before it imports anything: on a Node older than
 * package.json's `engines.node`, one line naming both versions and exit 1, never a
 * SyntaxError from a module that uses newer syntax.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_ENTRY } from '../../bench/kit/cli.js';
import { runToExit } from '../../bench/kit/launcher.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

const ENGINES = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const MIN_MAJOR = Number(/^>=(\d+)$/.exec(ENGINES)?.[1]);
/** A Node that says it is 20.0.0: process.versions replaced before the bin runs. */
const PRETEND_20 = `data:text/javascript,Object.defineProperty(process,'versions',{value:{...process.versions,node:'20.0.0'}})`;
/** The system's own node, where it is older than the package needs (on this project's machines, Node 20). */
const SYSTEM_NODE = '/usr/bin/node';

function systemNodeMajor(): number | undefined {
  if (!existsSync(SYSTEM_NODE)) return undefined;
  return Number(execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8', timeout: 10_000 }).trim());
}

describe('the Node version check of the bin', () => {
  it('requires the Node major of package.json engines.node', () => {
    expect(readFileSync(join(PACKAGE_ROOT, 'src', 'bin', 'jwt-grpc.ts'), 'utf8')).toContain(`const MIN_NODE_MAJOR = ${MIN_MAJOR};`);
  });

  it('refuses an older Node in one line, exit 1, before anything starts', async () => {
    const run = await runToExit(process.execPath, ['--import', PRETEND_20, CLI_ENTRY, 'serve', '--port', '0'], { timeoutMs: 15_000 });
    expect([run.code, run.stdout, run.stderr]).toEqual([
      1,
      '',
      `jwt-grpc: needs Node.js >= ${MIN_MAJOR}; this is Node.js 20.0.0 (${process.execPath})\n`,
    ]);
  });

  const major = systemNodeMajor();
  it.runIf(major !== undefined && major < MIN_MAJOR)(`refuses the real ${SYSTEM_NODE} (Node ${major})`, async () => {
    const run = await runToExit(SYSTEM_NODE, [CLI_ENTRY, 'serve', '--port', '0'], { timeoutMs: 15_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`^jwt-grpc: needs Node.js >= ${MIN_MAJOR}; this is Node.js ${major}\\.\\d+\\.\\d+ \\(${SYSTEM_NODE}\\)\\n$`),
    );
  });

  it('runs on this Node', async () => {
    const run = await runToExit(process.execPath, [CLI_ENTRY, '--version'], { timeoutMs: 15_000 });
    expect(run.code).toBe(0);
  });
});

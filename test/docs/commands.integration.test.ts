/**
 * Every ```sh block of README.md and docs/*.md runs as written, where its page says to run
 * it, as the ```ts blocks are compiled and run (test/package/examples.ts). Each block is
 * preceded by one annotation comment, so that no block is skipped silently:
 *
 * - `<!-- run: install -->`: in a folder where the package is installed as the README's
 *   "Install the package" leaves it (node_modules/jwt-grpc and its bin), with grpcurl and
 *   ghz on PATH as the Quick start says to put them. The blocks of a page so marked run in
 *   order in one bash session, in one folder, as a reader types them: what one block starts
 *   in the background (`... serve ... &`) the next one talks to, and is killed by process
 *   group when the page ends. After a line that starts a server in the background, the
 *   session waits for its port, as a reader waits for the banner before typing on.
 * - `<!-- run: clone -->`: the same, in a copy of the repository with its node_modules.
 * - `<!-- run: install, serves -->`: a server in the foreground: it must print its
 *   `listening on` banner within the deadline; then it is stopped by process group.
 * - `<!-- not run: REASON -->`: listed by the test (a skipped test naming the block and the
 *   reason): a Kubernetes cluster, docker, a Redis server, minutes of benchmark.
 *
 * A command that fails fails the test, naming the page and line, unless its comment says
 * `exit N` and it exits N. Each block has a deadline.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { markdownPages } from '../package/examples.js';

/** How long one block may run (the Quick start's ghz line runs for 10 s). */
const BLOCK_DEADLINE_MS = 40_000;
/** How long a background server may take to open its port. */
const PORT_WAIT_SECONDS = 20;

type Where = 'install' | 'clone';

interface ShBlock {
  readonly page: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly body: string;
  readonly annotation: { readonly run: Where; readonly serves: boolean } | { readonly notRun: string } | undefined;
}

const ANNOTATION = /^<!-- (?:run: (install|clone)(, serves)?|not run: (.+)) -->$/;

/** The ```sh blocks of a page, each with the annotation on the nearest non-blank line above it. */
function shBlocks(page: string): ShBlock[] {
  const lines = readFileSync(join(PACKAGE_ROOT, page), 'utf8').split('\n');
  const blocks: ShBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i] as string);
    if (open === null) continue;
    let end = i + 1;
    while (end < lines.length && !(lines[end] as string).startsWith('```')) end++;
    if (['sh', 'bash', 'shell', 'console'].includes(open[1] as string)) {
      let above = i - 1;
      while (above >= 0 && (lines[above] as string).trim() === '') above--;
      const match = ANNOTATION.exec((lines[above] ?? '').trim());
      const annotation =
        match === null
          ? undefined
          : match[3] !== undefined
            ? { notRun: match[3] }
            : { run: match[1] as Where, serves: match[2] !== undefined };
      blocks.push({ page, line: i + 1, body: lines.slice(i + 1, end).join('\n'), annotation });
    }
    i = end;
  }
  return blocks;
}

const BLOCKS = markdownPages().flatMap(shBlocks);
const where = (block: ShBlock): string => `${block.page}:${block.line}`;

/**
 * A line documented to end with `exit N` (`cmd   # ...; exit 1`) is run inside `if`, so that
 * the ERR trap does not see it, and its status is compared with N.
 */
function expectExits(body: string): string {
  return body
    .split('\n')
    .map((text) => {
      const documented = /^(?<command>[^#]*\S)(?<comment>\s+#.*\bexit (?<code>\d+).*)$/.exec(text);
      if (documented?.groups === undefined || text.trimEnd().endsWith('\\')) return text;
      const { command, comment, code } = documented.groups as { command: string; comment: string; code: string };
      return `if ${command}; then __status=0; else __status=$?; fi; __expect ${code} $__status $LINENO${comment}`;
    })
    .join('\n');
}

/**
 * After a command that starts `serve` in the background (its lines joined where they end in
 * a backslash), wait for its port (`--port N`, else 50051), on the same line.
 */
function waitForServers(body: string): string {
  const out: string[] = [];
  let command = '';
  for (const text of body.split('\n')) {
    out.push(text);
    command += `${text.replace(/\\$/, '')} `;
    if (text.trimEnd().endsWith('\\')) continue;
    if (/\bserve\b[^#]*&\s*(#.*)?$/.test(command.trimEnd())) {
      // On the same line, so that line numbers stay the page's: `cmd & __wait_port N  # comment`.
      out[out.length - 1] = text.replace(/&(\s*(#.*)?)$/, `& __wait_port ${/--port[ =](\d+)/.exec(command)?.[1] ?? '50051'}$1`);
    }
    command = '';
  }
  return out.join('\n');
}

/** The session's own functions: the ERR trap that reports a failing line, the port wait, the exit check. */
const PRELUDE = `
__fail() { echo "::fail $__block $1 $2"; }
__expect() { [ "$2" = "$1" ] || __fail "$3" "exited $2, the page says exit $1"; }
__wait_port() {
  for __i in $(seq 1 ${PORT_WAIT_SECONDS * 5}); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.2; done
  echo "::fail $__block $LINENO port $1 did not open within ${PORT_WAIT_SECONDS} s"
}
trap '__fail "$LINENO" "exited $?"' ERR
`;

interface Run {
  readonly output: string;
  readonly failures: string[];
}

/** Runs a bash script in its own process group; resolves when it exits or `until` matches its output. */
function runScript(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  markers: { until?: RegExp; deadlineMs: number },
): Promise<{ output: string; reason: 'exit' | 'matched' | 'deadline'; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let settled = false;
    const finish = (reason: 'exit' | 'matched' | 'deadline', code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever the script left running in the background dies with its group.
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
      resolve({ output, reason, code });
    };
    const timer = setTimeout(() => finish('deadline', null), markers.deadlineMs);
    const take = (chunk: Buffer): void => {
      output += chunk.toString();
      if (markers.until?.test(output) === true) finish('matched', null);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => finish('exit', code));
  });
}

/** The blocks of one session, each sourced in turn, each with its deadline (the driver watches the markers). */
async function runSession(blocks: readonly ShBlock[], cwd: string, env: NodeJS.ProcessEnv): Promise<Map<ShBlock, Run>> {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-sh-'));
  const results = new Map<ShBlock, Run>();
  try {
    const parts = blocks.map((block, index) => {
      const file = join(dir, `block-${index}.sh`);
      writeFileSync(file, waitForServers(expectExits(block.body)));
      return `__block=${index}; echo "::begin ${index}"; source ${JSON.stringify(file)}; echo "::end ${index}"`;
    });
    const script = `${PRELUDE}\n${parts.join('\n')}\n`;
    // One deadline per block: the whole session gets their sum, and a block's share is checked from the markers.
    const run = await runScript(script, cwd, env, { deadlineMs: BLOCK_DEADLINE_MS * blocks.length });
    blocks.forEach((block, index) => {
      const begin = run.output.indexOf(`::begin ${index}\n`);
      const end = run.output.indexOf(`::end ${index}\n`);
      const output = begin < 0 ? '' : run.output.slice(begin, end < 0 ? undefined : end);
      const failures = [...output.matchAll(new RegExp(`^::fail ${index} (\\d+) (.*)$`, 'gm'))].map(
        ([, line, why]) =>
          `${block.page}:${block.line + Number(line)}: ${(block.body.split('\n')[Number(line) - 1] ?? '').trim()} -> ${why}`,
      );
      if (begin < 0) failures.push(`${where(block)}: never ran (${run.reason})`);
      else if (end < 0)
        failures.push(
          `${where(block)}: did not finish (${run.reason === 'deadline' ? `ran past ${BLOCK_DEADLINE_MS * blocks.length} ms` : `bash exited ${run.code}`})`,
        );
      results.set(block, { output, failures });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

let work: string;
const folders: Record<Where, string> = { install: '', clone: '' };
/** PATH as the pages ask: Node, and grpcurl and ghz (the Quick start puts the pinned ones of `.tools/bin` there). */
let env: NodeJS.ProcessEnv;

/** A folder as "Install the package" leaves it: the package and its bin under node_modules. */
function makeInstallFolder(into: string): void {
  mkdirSync(join(into, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(
    join(into, 'package.json'),
    JSON.stringify({ name: 'my-app', private: true, type: 'module', dependencies: { 'jwt-grpc': '*' } }),
  );
  symlinkSync(PACKAGE_ROOT, join(into, 'node_modules', 'jwt-grpc'), 'dir');
  symlinkSync(join('..', 'jwt-grpc', 'dist', 'src', 'bin', 'jwt-grpc.js'), join(into, 'node_modules', '.bin', 'jwt-grpc'));
}

/** A copy of the repository (its sources, docs and manifest; its node_modules linked), so nothing here writes PACKAGE_ROOT's dist/. */
function makeClone(into: string): void {
  for (const input of ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'src', 'proto', 'bench', 'docs']) {
    cpSync(join(PACKAGE_ROOT, input), join(into, input), {
      recursive: true,
      filter: (source) => !source.includes(`${join('docs', 'tools')}`),
    });
  }
  symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(into, 'node_modules'), 'dir');
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'jwt-grpc-commands-'));
  env = { ...process.env, PATH: [join(PACKAGE_ROOT, '.tools', 'bin'), process.env['PATH']].join(delimiter), HOME: work };
  for (const name of Object.keys(env))
    if (name.startsWith('JWT_GRPC_') || name.startsWith('OTEL_') || name === 'NODEMAXPROCS') delete env[name];
});
afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the sh blocks of README.md and docs/*.md', () => {
  it('finds the blocks, and each says where it runs or why it does not', () => {
    expect(BLOCKS.filter((block) => block.page === 'README.md').length).toBeGreaterThanOrEqual(8);
    expect(BLOCKS.filter((block) => block.annotation === undefined).map(where)).toEqual([]);
  });

  for (const block of BLOCKS.filter((b) => b.annotation !== undefined && 'notRun' in b.annotation)) {
    it.skip(`not run: ${where(block)} (${(block.annotation as { notRun: string }).notRun})`, () => undefined);
  }

  const pages = [...new Set(BLOCKS.map((block) => block.page))];
  for (const page of pages) {
    for (const kind of ['install', 'clone'] as const) {
      const session = BLOCKS.filter(
        (b) => b.page === page && b.annotation !== undefined && 'run' in b.annotation && b.annotation.run === kind && !b.annotation.serves,
      );
      if (session.length === 0) continue;
      it(
        `runs ${page}'s blocks in ${kind === 'install' ? 'an install folder' : 'a clone'}, in order: ${session.map((b) => b.line).join(', ')}`,
        async () => {
          const folder = join(work, `${page.replaceAll('/', '-')}-${kind}`);
          mkdirSync(folder);
          if (kind === 'install') makeInstallFolder(folder);
          else makeClone(folder);
          folders[kind] = folder;
          const results = await runSession(session, folder, env);
          const failures = [...results.values()].flatMap((run) => run.failures);
          expect(failures, [...results.values()].map((run) => run.output).join('\n')).toEqual([]);
        },
        BLOCK_DEADLINE_MS * session.length + 30_000,
      );
    }
    for (const block of BLOCKS.filter(
      (b) => b.page === page && b.annotation !== undefined && 'serves' in b.annotation && b.annotation.serves,
    )) {
      it(
        `serves: ${where(block)} prints its banner, then stops`,
        async () => {
          const folder = join(work, `${page.replaceAll('/', '-')}-${block.line}-serves`);
          mkdirSync(folder);
          makeInstallFolder(folder);
          const run = await runScript(block.body, folder, env, { until: /listening on \S+:\d+/, deadlineMs: BLOCK_DEADLINE_MS });
          expect(run.reason, run.output).toBe('matched');
        },
        BLOCK_DEADLINE_MS + 10_000,
      );
    }
  }
});

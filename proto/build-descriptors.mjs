// Compiles proto/ into dist/proto/descriptor-set.binpb: one google.protobuf.FileDescriptorSet
// with every file and its imports, the descriptors server reflection serves.
//
// buf compiles as protoc does (json_name on every field, protoc's map entry messages);
// source info is left out, as protoc's --descriptor_set_out leaves it out by default.
// Plain JavaScript, because it runs before (and independently of) the TypeScript build.
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = join(ROOT, 'dist', 'proto', 'descriptor-set.binpb');

const MISSING_BUF =
  'the build compiles proto/ with buf, which comes with the dev dependency @bufbuild/buf and its ' +
  `platform package for ${process.platform}-${process.arch} (an optional dependency, e.g. @bufbuild/buf-linux-x64). ` +
  'Install the dev and optional dependencies: `npm ci` (without --omit=dev, --omit=optional or --no-optional).';

function fail(message) {
  console.error(`build-descriptors: ${message}`);
  process.exit(1);
}

/** The buf launcher of @bufbuild/buf, once it has shown it can run buf. */
function locateBuf() {
  let launcher;
  try {
    launcher = createRequire(import.meta.url).resolve('@bufbuild/buf/bin/buf');
  } catch {
    fail(`@bufbuild/buf is not installed: ${MISSING_BUF}`);
  }
  // The launcher runs the binary of the platform package; without one it dies with a stack trace.
  const probe = spawnSync(process.execPath, [launcher, '--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    const lines = (probe.error?.message ?? probe.stderr).split('\n').map((line) => line.trim());
    const why = lines.find((line) => /^[A-Za-z]*Error\b/.test(line)) ?? lines.find((line) => line !== '') ?? `exit status ${probe.status}`;
    fail(`cannot run buf (${why}): ${MISSING_BUF}`);
  }
  return launcher;
}

const buf = locateBuf();
mkdirSync(dirname(OUTPUT), { recursive: true });
// Written beside the output and renamed over it, so no reader ever sees half a file.
const partial = join(dirname(OUTPUT), `descriptor-set.${process.pid}.partial.binpb`);
const args = ['build', 'proto', '--as-file-descriptor-set', '--exclude-source-info', '-o', partial];
const build = spawnSync(process.execPath, [buf, ...args], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) {
  rmSync(partial, { force: true });
  fail(`buf ${args.join(' ')} failed (status ${build.status ?? build.signal}); its messages are above`);
}
renameSync(partial, OUTPUT);

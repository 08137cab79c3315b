#!/usr/bin/env node
// This entry imports nothing before it has checked the Node version: the library and its
// examples use syntax an older Node cannot parse (`await using`), and a module that fails to
// parse would print a SyntaxError instead of saying what to install. The build bundles this
// file and what it loads (src/bin/bundle.mjs): a command loads only its own chunks.

/** The oldest Node major the package runs on: package.json's `engines.node` (a test holds the two together). */
const MIN_NODE_MAJOR = 22;

const major = Number(process.versions.node.split('.')[0]);
if (!(major >= MIN_NODE_MAJOR)) {
  process.stderr.write(`jwt-grpc: needs Node.js >= ${MIN_NODE_MAJOR}; this is Node.js ${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}
// V8's compiled code for the bundle's chunks, kept on disk between runs (Node >= 22.1): a
// start then skips most of their parsing and compiling (bench/PERFORMANCE.md, "Start-up").
// Node's default place (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE);
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. A cache that cannot be written costs nothing.
const nodeModule = await import('node:module');
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('../cli/main.js');

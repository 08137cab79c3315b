/**
 * The whole public API in one module, for the project's own tests and benchmarks: every
 * entry point of this folder, re-exported. The package does not export it; a program imports
 * the entry point of its concern (package.json `exports`, docs/library.md "Entry points"),
 * so that a service that only verifies tokens loads no server. An export lives in exactly
 * one entry point, so none is lost here to a clash (test/package/entry-points.integration.test.ts).
 *
 * @internal
 */
export * from './issuer.js';
export * from './keys.js';
export * from './tokens.js';
export * from './client.js';
export * from './cluster.js';
export * from './discovery.js';
export * from './grpc.js';
export * from './errors.js';
export * from './log.js';

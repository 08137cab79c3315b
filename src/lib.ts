/**
 * The whole public API in one module, for the project's own tests and benchmarks: every
 * entry point of ./lib/, re-exported. The package does not export it; a program imports
 * the entry point of its concern (package.json `exports`, docs/library.md "Entry points"),
 * so that a service that only verifies tokens loads no server. An export lives in exactly
 * one entry point, so none is lost here to a clash (test/package/entry-points.integration.test.ts).
 *
 * @internal
 */
export * from './lib/issuer.js';
export * from './lib/keys.js';
export * from './lib/tokens.js';
export * from './lib/client.js';
export * from './lib/cluster.js';
export * from './lib/discovery.js';
export * from './lib/grpc.js';
export * from './lib/errors.js';
export * from './lib/log.js';

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JwtGrpcError } from './errors.js';

/**
 * The folder holding this package's package.json. Sources run from `src/` (tests) and
 * from `dist/src/` (the published build), at different depths, so walk up rather than
 * hard-code a relative path.
 */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    // existsSync first: a read that fails throws an error with a stack, at every level of a
    // start that walks up from dist/src/bin/chunks/ (the bundled executable).
    const file = join(dir, 'package.json');
    try {
      if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'jwt-grpc') return dir;
    } catch {
      // not a readable package.json: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new JwtGrpcError('ERR_FILE', 'jwt-grpc: cannot find the package root (package.json)', { field: 'package.json' });
    dir = parent;
  }
}

export const PACKAGE_ROOT = findPackageRoot();

/**
 * Path of the service's proto file, shipped in the package (also `jwt-grpc/proto/jwt.proto`).
 *
 * @example
 * ```ts
 * import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
 * import { loadSync } from '@grpc/proto-loader';
 *
 * const proto = loadPackageDefinition(loadSync(PROTO_PATH, { keepCase: true, longs: Number })) as any;
 * const client = new proto.jwt.services.JwtService('127.0.0.1:50051', credentials.createInsecure());
 * ```
 */
export const PROTO_PATH = join(PACKAGE_ROOT, 'proto', 'jwt.proto');

/** This package's version, for `--version` and logs. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

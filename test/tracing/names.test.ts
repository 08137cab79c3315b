/** Span names from gRPC paths (src/tracing/names.ts). */
import { describe, expect, it } from 'vitest';
import { splitPath } from '../../src/tracing/names.js';

describe('splitPath', () => {
  it.each([
    ['/jwt.v1.JwtService/GenerateJwt', { service: 'jwt.v1.JwtService', method: 'GenerateJwt' }],
    ['/Svc/a/b', { service: 'Svc', method: 'a/b' }],
    ['/OnlyMethod', { service: '', method: 'OnlyMethod' }],
    ['/', { service: '', method: '' }],
  ])('%s', (path, parts) => {
    expect(splitPath(path)).toEqual(parts);
  });
});

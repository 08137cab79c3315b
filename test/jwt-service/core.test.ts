/**
 * JwtService's core (src/jwt-service/core.ts) without a transport: it tells its observer
 * what it signed, verified and refused, with the scope a call passes; and it names no gRPC
 * status, only the codes of its errors, which the transport adapter maps (handlers.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import type { CoreObserver } from '../../src/jwt-service/observer.js';
import { JwtServiceCore } from '../../src/jwt-service/core.js';
import { resolveServiceOptions } from '../../src/jwt-service/options.js';
import { silentLogger } from '../../src/lib/index.js';
import { sharedKeys } from '../../bench/kit/jwt-servers.js';

describe('JwtServiceCore', () => {
  it("tells its observer what it signed and what it verified, with the call's scope, and of a refusal", async () => {
    const events: unknown[] = [];
    const observer: CoreObserver<string> = {
      onIssued: ({ alg, kid, sub, granted }, scope) => events.push(['issued', alg, kid, sub, granted, scope]),
      onVerified: (result, scope) => events.push(['verified', result.valid, scope]),
      onRefused: ({ error, underPolicy }, scope) => events.push(['refused', (error as { code?: string }).code, underPolicy, scope]),
    };
    const keys = await sharedKeys();
    const core = new JwtServiceCore<string>({ options: resolveServiceOptions({ logger: silentLogger }), keys, observer });
    const request = { subject: 'ada', audience: '', ttl_seconds: 0, claims_json: '', algorithm: 'ES256' };
    const issued = await core.generate(request, undefined, 'sign-span');
    core.verify({ jwt: issued.jwt, audience: '', issuer: '' }, 'verify-span');
    expect(() => core.generate({ ...request, algorithm: 'none' }, undefined, 'bad-span')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_REQUEST' }),
    );
    const kid = keys.activeEntry('ES256')?.kid;
    expect(events).toEqual([
      ['issued', 'ES256', kid, 'ada', undefined, 'sign-span'],
      ['verified', true, 'verify-span'],
      ['refused', 'ERR_INVALID_REQUEST', false, 'bad-span'],
    ]);
  });

  it('names no gRPC status: its errors carry codes, which the transport adapter maps (handlers.ts)', () => {
    const source = readFileSync(join(PACKAGE_ROOT, 'src', 'jwt-service', 'core.ts'), 'utf8');
    expect(source).not.toMatch(/GrpcStatus|@opentelemetry|\bSpan\b|logger\./);
  });
});

/**
 * The JWT service's metrics (src/metrics/jwt-service-metrics.ts): tokens by kid, verifications
 * by reason (every reason shown from zero), policy decisions, revocations, cache counts, the
 * revocation store gauge and the loaded keys by role, all read from the service at scrape.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';
import { ReloadMetrics, ServiceMetrics, keyRole } from '../../src/metrics/jwt-service-metrics.js';

async function lines(registry: Registry, prefix: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(prefix));
}

describe('keyRole', () => {
  it('names a key by what it does', () => {
    expect(keyRole({ kid: 'a', alg: 'ES256', active: true, canSign: true, deactivatedAt: undefined })).toBe('active');
    expect(keyRole({ kid: 'a', alg: 'ES256', active: false, canSign: false, deactivatedAt: undefined })).toBe('verify-only');
    expect(keyRole({ kid: 'a', alg: 'ES256', active: false, canSign: false, deactivatedAt: 1 })).toBe('deactivated');
  });
});

describe('ServiceMetrics', () => {
  it('counts tokens by kid, verifications by result and reason, decisions and revocations', async () => {
    const registry = new Registry();
    const metrics = new ServiceMetrics(registry);
    metrics.tokenIssued('ES256', 'k1');
    metrics.tokenIssued('ES256', 'k1');
    metrics.tokenIssued('HS256', 'k2');
    metrics.verified({ valid: true } as never);
    metrics.verified({ valid: false, reason: 'EXPIRED', message: '' });
    metrics.verified({ valid: false, reason: 'EXPIRED', message: '' });
    metrics.policyDecision('deny', 'subjects');
    metrics.policyDecision('allow', 'none');
    metrics.policyDecision('deny', 'subjects');
    metrics.revocation('revoked');
    metrics.revocation('unavailable');
    expect(await lines(registry, 'jwt_grpc_tokens_issued_total')).toEqual([
      'jwt_grpc_tokens_issued_total{alg="ES256",kid="k1"} 2',
      'jwt_grpc_tokens_issued_total{alg="HS256",kid="k2"} 1',
    ]);
    const verifications = await lines(registry, 'jwt_grpc_verifications_total');
    expect(verifications).toHaveLength(11);
    expect(verifications).toContain('jwt_grpc_verifications_total{result="valid",reason="none"} 1');
    expect(verifications).toContain('jwt_grpc_verifications_total{result="invalid",reason="EXPIRED"} 2');
    expect(verifications).toContain('jwt_grpc_verifications_total{result="invalid",reason="REVOKED"} 0');
    expect(await lines(registry, 'jwt_grpc_policy_decisions_total')).toEqual([
      'jwt_grpc_policy_decisions_total{decision="deny",rule="subjects"} 2',
      'jwt_grpc_policy_decisions_total{decision="allow",rule="none"} 1',
    ]);
    const revocations = await lines(registry, 'jwt_grpc_revocations_total');
    expect(revocations).toHaveLength(6);
    expect(revocations).toContain('jwt_grpc_revocations_total{outcome="revoked"} 1');
    expect(revocations).toContain('jwt_grpc_revocations_total{outcome="unavailable"} 1');
    expect(revocations).toContain('jwt_grpc_revocations_total{outcome="already"} 0');
  });

  it('reads the cache, the store and the keys from the attached service at each scrape', async () => {
    const registry = new Registry();
    const metrics = new ServiceMetrics(registry);
    expect(await lines(registry, 'jwt_grpc_keys')).toEqual([]);
    expect(await lines(registry, 'jwt_grpc_revocation_store_up')).toEqual([]);
    const [jwk] = exportKeys(await generateKeys({ algorithms: ['HS256'] }), { includePrivate: true }).keys;
    const keys = importKeys({
      keys: [
        { ...jwk, kid: 'new' },
        { ...jwk, kid: 'staged', key_ops: ['verify'] },
        { ...jwk, kid: 'old', key_ops: ['verify'], deactivated_at: '2026-01-01T00:00:00Z' },
      ],
    });
    const state = { keys, cacheStats: { hits: 4, misses: 1 }, revocations: { storeKind: 'redis', storeUp: false } };
    metrics.attach(state);
    expect(await lines(registry, 'jwt_grpc_verify_cache_')).toEqual([
      'jwt_grpc_verify_cache_hits_total 4',
      'jwt_grpc_verify_cache_misses_total 1',
    ]);
    expect(await lines(registry, 'jwt_grpc_revocation_store_up')).toEqual(['jwt_grpc_revocation_store_up{store="redis"} 0']);
    expect(await lines(registry, 'jwt_grpc_keys')).toEqual([
      'jwt_grpc_keys{alg="HS256",kid="new",role="active"} 1',
      'jwt_grpc_keys{alg="HS256",kid="staged",role="verify-only"} 1',
      'jwt_grpc_keys{alg="HS256",kid="old",role="deactivated"} 1',
    ]);
    state.cacheStats.hits = 10;
    state.revocations = { storeKind: 'redis', storeUp: true };
    expect(await lines(registry, 'jwt_grpc_verify_cache_hits_total')).toEqual(['jwt_grpc_verify_cache_hits_total 10']);
    expect(await lines(registry, 'jwt_grpc_revocation_store_up')).toEqual(['jwt_grpc_revocation_store_up{store="redis"} 1']);
  });
});

describe('ReloadMetrics', () => {
  it('counts reloads and failures under the file’s name', async () => {
    const registry = new Registry();
    const keys = new ReloadMetrics(registry);
    const policy = new ReloadMetrics(registry, 'policy');
    keys.reloads += 2;
    policy.failures += 1;
    expect(await lines(registry, 'jwt_grpc_')).toEqual([
      'jwt_grpc_key_reloads_total 2',
      'jwt_grpc_key_reload_failures_total 0',
      'jwt_grpc_policy_reloads_total 0',
      'jwt_grpc_policy_reload_failures_total 1',
    ]);
  });
});

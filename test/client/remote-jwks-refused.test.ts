/**
 * A remote verifier applies the key file's checks to each fetched JWK Set: a degenerate
 * key (RSA e = 1, a small-order Ed25519 point) or a non-canonical one is left out, the
 * rest of the set is used, one warn line names each refused kid and reason, and
 * `jwt_grpc_remote_jwks_rejected_keys_total{reason}` counts it. The set is served over
 * HTTP by a node:http server on loopback, as an issuer would.
 */
import { generateKeyPairSync } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, type Logger, createRemoteVerifier, createSigner, exportKeys, generateKeys } from '../../src/lib/index.js';
import { forgedRs256Token, rsaJwkWithExponent } from '../keys/degenerate-helpers.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A JWKS URL on loopback answering `body()`, counting its answers. */
async function jwksServer(body: () => string): Promise<{ url: string; served: () => number }> {
  let served = 0;
  const server = createServer((_req, res) => {
    served += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`, served: () => served };
}

function recordingLogger(): Logger & { warnings: { message: string; fields: Record<string, unknown> }[] } {
  const warnings: { message: string; fields: Record<string, unknown> }[] = [];
  return { warnings, info: () => {}, error: () => {}, warn: (message, fields = {}) => warnings.push({ message, fields: { ...fields } }) };
}

async function rejected(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('jwt_grpc_remote_jwks_rejected_keys_total')?.get();
  return Object.fromEntries((metric?.values ?? []).map(({ labels, value }) => [String(labels['reason']), value]));
}

const now = () => Math.floor(Date.now() / 1000);
const n = String(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }).n);
const identity = Buffer.alloc(32);
identity[0] = 1;

describe('a remote verifier fetching a JWK Set with degenerate keys', () => {
  it('uses the good key, refuses tokens under the bad kids, logs each once per changed set and counts it', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const good = exportKeys(keys).keys[0];
    const set = {
      keys: [
        { ...rsaJwkWithExponent(n, 1n), kid: 'rs-e1', alg: 'RS256', use: 'sig' },
        good,
        { kty: 'OKP', crv: 'Ed25519', x: identity.toString('base64url'), kid: 'ed-identity', alg: 'EdDSA' },
        { ...good, kid: 'es-padded', x: `${String(good?.x)}=` },
      ],
    };
    let body = JSON.stringify(set);
    const { url, served } = await jwksServer(() => body);
    const registry = new Registry();
    const logger = recordingLogger();
    const verifier = createRemoteVerifier({ jwksUrl: url }, { audience: ANY_AUDIENCE, logger, metricsRegistry: registry, cooldownMs: 0 });

    const signed = createSigner(keys).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 600 }).token;
    expect(await verifier.verify(signed)).toMatchObject({ valid: true });
    expect(verifier.keys.map((key) => key.kid)).toEqual([good?.kid]);
    const forged = forgedRs256Token('rs-e1', { sub: 'root', role: 'admin', iat: now(), exp: now() + 600 });
    expect(await verifier.verify(forged)).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });

    const lines = () =>
      logger.warnings
        .filter((line) => line.message === 'JWK Set key left out')
        .map(({ fields }) => [fields['kid'], fields['reason'], fields['problem']]);
    const expected = [
      ['rs-e1', 'weak', 'key (kid "rs-e1"): RS256 public exponent 1 is below 65537'],
      ['ed-identity', 'weak', 'key (kid "ed-identity"): EdDSA public key is a point of small order'],
      [
        'es-padded',
        'encoding',
        'key (kid "es-padded"): "x" is not canonical base64url (no padding, "+", "/", whitespace or stray trailing bits)',
      ],
    ];
    // The forged token's unknown kid refetched the set: unchanged, so neither logged nor counted again.
    expect(served()).toBe(2);
    expect(lines()).toEqual(expected);
    expect(await rejected(registry)).toEqual({ weak: 2, mismatch: 0, encoding: 1, malformed: 0, unsupported: 0 });
    expect(JSON.stringify(logger.warnings)).not.toContain(n.slice(0, 40));

    // A changed set is checked anew: its bad key is logged and counted again.
    body = JSON.stringify({ keys: [set.keys[1], set.keys[0]] });
    await verifier.refresh();
    expect(lines()).toEqual([...expected, expected[0]]);
    expect(await rejected(registry)).toMatchObject({ weak: 3, encoding: 1 });
    expect(await verifier.verify(signed)).toMatchObject({ valid: true });
    expect((await registry.metrics()).includes('# TYPE jwt_grpc_remote_jwks_rejected_keys_total counter')).toBe(true);
  });

  it('shares the counter between verifiers of one registry, and refuses a metricsRegistry that is not one', async () => {
    const { url } = await jwksServer(() => JSON.stringify({ keys: [{ ...rsaJwkWithExponent(n, 3n), kid: 'rs-e3', alg: 'RS256' }] }));
    const registry = new Registry();
    const quiet = recordingLogger();
    for (let i = 0; i < 2; i++)
      await createRemoteVerifier({ jwksUrl: url }, { audience: ANY_AUDIENCE, logger: quiet, metricsRegistry: registry }).refresh();
    expect(await rejected(registry)).toMatchObject({ weak: 2 });
    expect(() => createRemoteVerifier({ jwksUrl: url }, { audience: ANY_AUDIENCE, metricsRegistry: {} as Registry })).toThrow(
      /option metricsRegistry: must be a prom-client Registry/,
    );
  });
});

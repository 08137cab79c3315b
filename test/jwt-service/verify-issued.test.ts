/**
 * `verifyIssued` (`serve --verify-issued`, JWT_GRPC_VERIFY_ISSUED): the reference
 * benchmark's sign-then-verify as an explicit mode. A key pair that signs what it cannot
 * verify shows which GenerateJwt verified. Import refuses such a pair and a key handle
 * verifies every signature its backend returns, so the pair is built past both, as a bug
 * would leave it: an in-memory entry whose private key is another key's. By default the
 * token is answered unchecked; in the mode the call is refused INTERNAL, logged, on both
 * transports. A backend that swaps its key after it opened is refused whatever the mode
 * (the handle's own check), from the library and from the command line.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { KeySet, importKeys } from '../../src/lib/index.js';
import { ALGORITHM_SPECS } from '../../src/algorithms/index.js';
import { registerKeyBackend } from '../../src/keys/backend.js';
import { parseCommand } from '../../src/cli/args.js';
import { serve } from '../../src/cli/serve.js';
import type { ClusterHandle } from '../../src/cluster/handle.js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, recordingLogger, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';

/** A backend that signs the first signature of a session with the key file's key, then with a private key of its own. */
const honest = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const forged = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
let signatures = 0;
registerKeyBackend({
  member: 'test-forger',
  packageName: 'none',
  async open() {
    let signed = 0;
    return {
      publicJwk: published as never,
      async sign(data) {
        signatures += 1;
        signed += 1;
        return cryptoSign('sha256', data, { key: signed === 1 ? honest.privateKey : forged, dsaEncoding: 'ieee-p1363' });
      },
      async close() {},
    };
  },
});
const published = { kty: 'EC', crv: 'P-256', ...honest.publicKey.export({ format: 'jwk' }) };
const ENTRY = { kid: 'forger', alg: 'ES256', 'test-forger': 'slot-1', ...published };

/** A key set whose one key signs with another key's private half than the public one it verifies with. */
function brokenKeys(): KeySet {
  return new KeySet([
    {
      kid: 'forger',
      alg: 'ES256',
      spec: ALGORITHM_SPECS.ES256,
      signingKey: forged,
      verificationKey: honest.publicKey,
      deactivatedAt: undefined,
    },
  ]);
}

/** The key set of {@link ENTRY}: a handle on the swapping backend. */
function swappingKeys(): KeySet {
  return importKeys({ keys: [ENTRY] });
}

const clients = new ClientPool();
const dirs: string[] = [];
afterEach(() => clients.closeAll());
afterAll(async () => {
  await closeAllServers(0);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.each(TRANSPORTS)('GenerateJwt on %s', (transport) => {
  it('by default answers the token it signed without verifying it', async () => {
    const { port } = await startServer({ transport, keys: brokenKeys() });
    const client = clients.jwt(port);
    const issued = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    // Unchecked: the pair is broken, which only a verify shows.
    expect(await client.verifyJwt({ jwt: issued.jwt })).toMatchObject({ valid: false, reason: 'BAD_SIGNATURE' });
  });

  it('with verifyIssued verifies it first, and refuses INTERNAL (logged, the reason kept from the caller) when it does not verify', async () => {
    const logger = recordingLogger();
    const { port } = await startServer({ transport, keys: brokenKeys(), verifyIssued: true, logger });
    const failure = await callError(clients.jwt(port).generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(failure.code).toBe(status.INTERNAL);
    expect(failure.details).not.toMatch(/self-check|forger/);
    expect(JSON.stringify(logger.lines)).toMatch(/self-check of a token signed with kid forger failed: its signature does not verify/);
  });

  it('with verifyIssued answers a token that verifies as before', async () => {
    const { port } = await startServer({ transport, verifyIssued: true, keys: await sharedKeys() });
    const client = clients.jwt(port);
    const issued = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    expect(await client.verifyJwt({ jwt: issued.jwt })).toMatchObject({ valid: true, sub: 'ada' });
  });
});

describe('verifyIssued as an option', () => {
  it('is a boolean, refused otherwise naming it', async () => {
    await expect(startServer({ transport: 'http2', keys: brokenKeys(), verifyIssued: 'yes' as never })).rejects.toThrow(
      /option verifyIssued: must be true or false/,
    );
  });
});

/** `jwt-grpc serve` in this process (so that it loads the key file through the test backend), on the key file of {@link ENTRY}. */
async function serveCli(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-verify-issued-'));
  dirs.push(dir);
  const file = join(dir, 'keys.json');
  writeFileSync(file, JSON.stringify({ keys: [ENTRY] }));
  chmodSync(file, 0o600);
  const command = parseCommand(['serve', '--host', '127.0.0.1', '--port', '0', '--keys', file, '--log-level', 'error', ...argv], env);
  if (command.kind !== 'serve') throw new Error('expected serve');
  return serve(command.args);
}

describe('a backend that swaps its key after it opened', () => {
  it.each([false, true])(
    'is refused UNAVAILABLE whatever verifyIssued (%s) says: the handle checks every signature',
    async (verifyIssued) => {
      const { port } = await startServer({ transport: 'http2', keys: swappingKeys(), verifyIssued });
      const before = signatures;
      const failure = await callError(clients.jwt(port).generateJwt({ subject: 'ada', algorithm: 'ES256' }));
      expect(failure.code).toBe(status.UNAVAILABLE);
      expect(failure.details).toBe('key backend unavailable');
      // The handle's check as it opens (honest), then the token's (swapped), refused.
      expect(signatures - before).toBe(2);
    },
  );

  it.each([
    ['--verify-issued', ['--verify-issued'], {}],
    ['JWT_GRPC_VERIFY_ISSUED=1', [], { JWT_GRPC_VERIFY_ISSUED: '1' }],
    ['neither', [], {}],
  ])('is refused from the command line too (%s)', async (_name, argv, env) => {
    const handle = await serveCli(argv, env);
    try {
      const failure = await callError(clients.jwt(handle.port).generateJwt({ subject: 'ada', algorithm: 'ES256' }));
      expect(failure.code).toBe(status.UNAVAILABLE);
    } finally {
      clients.closeAll();
      await handle.close();
    }
  });
});

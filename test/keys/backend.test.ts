/**
 * A key that is a handle (src/keys/backend.ts), over a fake backend: the public key is
 * checked on open, a failed open is tried again, a signature is bounded by its deadline and
 * by KEY_BACKEND_CONCURRENCY, the circuit breaker opens after KEY_BACKEND_BREAKER_FAILURES
 * failures in a row and tells readiness, and every refusal is UNAVAILABLE naming the key.
 * (test/keys/key-backend.test.ts drives the same through GenerateJwt over gRPC.)
 */
import { generateKeyPairSync, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  KEY_BACKEND_BREAKER_FAILURES,
  KEY_BACKEND_CONCURRENCY,
  type BackendCallLimits,
  type KeyBackend,
  KeyBackendUnavailable,
  KeyHandle,
  backendPublicJwk,
  generateHandleEntry,
  keyBackend,
  keyBackendBadSignatures,
  keyBackendMembers,
  onKeyBackendChange,
  registerKeyBackend,
  samePublicKey,
} from '../../src/keys/backend.js';

const PAIR = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const PUBLIC = { kty: 'EC', crv: 'P-256', ...PAIR.publicKey.export({ format: 'jwk' }) };

/** Whether `signature` is the fake backend's ES256 signature of `data` (JOSE form). */
function signs(data: string, signature: Buffer): boolean {
  return cryptoVerify('sha256', Buffer.from(data), { key: PAIR.publicKey, dsaEncoding: 'ieee-p1363' }, signature);
}

/** A backend whose behaviour each test sets. */
function fakeBackend(member: string) {
  const state = {
    opens: 0,
    closes: 0,
    failOpen: false,
    hangOpen: false,
    /** The limits of the last open: what the backend would give its own client. */
    limits: undefined as BackendCallLimits | undefined,
    fail: false,
    hang: false,
    inFlight: 0,
    maxInFlight: 0,
    publicJwk: PUBLIC as Record<string, unknown>,
    signingKey: PAIR.privateKey,
  };
  const backend: KeyBackend = {
    member,
    packageName: 'none',
    async open(ref, _alg, limits) {
      state.opens += 1;
      state.limits = limits;
      if (state.hangOpen) await new Promise(() => {});
      if (state.failOpen) throw new Error(`cannot open ${ref}`);
      return {
        publicJwk: state.publicJwk,
        async sign(data) {
          state.inFlight += 1;
          state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
          try {
            await new Promise((resolve) => setTimeout(resolve, 5));
            if (state.hang) await new Promise(() => {});
            if (state.fail) throw new Error('device unreachable\n  at stack frame');
            return cryptoSign('sha256', data, { key: state.signingKey, dsaEncoding: 'ieee-p1363' });
          } finally {
            state.inFlight -= 1;
          }
        },
        async close() {
          state.closes += 1;
        },
      };
    },
    async generate(ref) {
      return `${ref}#created`;
    },
  };
  return { backend, state };
}

const handles: KeyHandle[] = [];
afterEach(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
});

function handleOver(member: string) {
  const fake = fakeBackend(member);
  const handle = new KeyHandle(fake.backend, 'ref-1?pin-source=file:pin', 'kid-1', 'ES256', PUBLIC);
  handles.push(handle);
  return { handle, ...fake };
}

describe('samePublicKey', () => {
  it('compares the members that define the key', () => {
    expect(samePublicKey(PUBLIC, { ...PUBLIC, kid: 'other', use: 'sig' })).toBe(true);
    expect(samePublicKey(PUBLIC, { ...PUBLIC, y: 'zz' })).toBe(false);
    expect(samePublicKey({ kty: 'RSA', n: 'n', e: 'AQAB' }, { kty: 'RSA', n: 'n', e: 'AQAB', x: 'ignored' })).toBe(true);
    expect(samePublicKey({ kty: 'RSA', n: 'n', e: 'AQAB' }, { kty: 'RSA', n: 'm', e: 'AQAB' })).toBe(false);
  });
});

describe('the registry', () => {
  it('finds a backend by its member, and makes entries from what it creates', async () => {
    const { backend } = fakeBackend('fake-registry');
    registerKeyBackend(backend);
    expect(keyBackend('fake-registry')).toBe(backend);
    expect(keyBackendMembers()).toContain('fake-registry');
    await expect(backendPublicJwk('fake-registry', 'r', 'ES256', 1000)).resolves.toEqual(PUBLIC);
    await expect(generateHandleEntry('fake-registry', 'r', 'ES256', 'k', 1000)).resolves.toEqual({
      kid: 'k',
      alg: 'ES256',
      'fake-registry': 'r#created',
      ...PUBLIC,
    });
  });

  it('refuses a member no backend registered, naming it', async () => {
    await expect(backendPublicJwk('vault', 'r', 'ES256', 1000)).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      field: 'vault',
      message: 'no key backend "vault"',
    });
    await expect(generateHandleEntry('vault', 'r', 'ES256', 'k', 1000)).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      message: 'no key backend "vault" that creates keys',
    });
  });
});

describe('KeyHandle', () => {
  it('signs through the backend, opening it once', async () => {
    const { handle, state } = handleOver('fake-a');
    expect(signs('a.b', await handle.sign(Buffer.from('a.b'), 1000))).toBe(true);
    await handle.sign(Buffer.from('a.c'), 1000);
    expect(state.opens).toBe(1);
    expect(handle.canSign).toBe(true);
    expect(inspect(handle)).toBe('KeyHandle(fake-a:kid-1)');
  });

  it('refuses a backend key other than the key file’s, naming the kid and the reference without its query', async () => {
    const { handle, state } = handleOver('fake-b');
    state.publicJwk = { ...PUBLIC, x: 'other' };
    await expect(handle.open(1000)).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      field: 'kid-1',
      message: 'key kid-1: the fake-b key ref-1 is not the public key the key file holds',
    });
    expect(state.closes, 'the wrong key is closed').toBe(1);
    const err = await handle.sign(Buffer.from('x'), 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeyBackendUnavailable);
    expect(err).toMatchObject({
      code: 'ERR_KEY_BACKEND_UNAVAILABLE',
      message: expect.stringMatching(/^key kid-1 \(fake-b\) cannot sign: key kid-1: the fake-b key ref-1 is not/),
    });
  });

  it('refuses a backend that reports the key file’s public key but signs with another, as it opens', async () => {
    const { handle, state } = handleOver('fake-h');
    state.signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(handle.open(1000)).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      field: 'kid-1',
      message:
        'key kid-1: the fake-h key ref-1 signs with a key other than the public key it reports (the signature made as it opens does not verify)',
    });
    expect(state.closes, 'the session is closed').toBe(1);
    await expect(handle.sign(Buffer.from('a.b'), 1000)).rejects.toMatchObject({
      code: 'ERR_KEY_BACKEND_UNAVAILABLE',
      message: expect.stringContaining('signs with a key other than'),
    });
  });

  it('opens again after a failed open', async () => {
    const { handle, state } = handleOver('fake-c');
    state.failOpen = true;
    await expect(handle.sign(Buffer.from('x'), 1000)).rejects.toMatchObject({
      message: 'key kid-1 (fake-c) cannot sign: cannot open ref-1?pin-source=file:pin',
    });
    state.failOpen = false;
    expect(signs('x', await handle.sign(Buffer.from('x'), 1000))).toBe(true);
    expect(state.opens).toBe(2);
  });

  it('answers UNAVAILABLE naming the deadline when the backend does not answer in time', async () => {
    const { handle, state } = handleOver('fake-d');
    state.hang = true;
    await expect(handle.sign(Buffer.from('x'), 50)).rejects.toMatchObject({
      code: 'ERR_KEY_BACKEND_UNAVAILABLE',
      message: 'key kid-1 (fake-d) cannot sign: no answer within 50 ms (option keyBackendTimeoutMs)',
    });
  });

  it('bounds the open too: one that never answers is given up at the deadline, and the next call opens anew', async () => {
    const { handle, state } = handleOver('fake-i');
    state.hangOpen = true;
    const started = Date.now();
    await expect(handle.open(100)).rejects.toMatchObject({
      code: 'ERR_KEY_BACKEND_UNAVAILABLE',
      message: 'key kid-1 (fake-i) cannot sign: the backend did not open the key within 100 ms (option keyBackendTimeoutMs)',
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(state.limits?.timeoutMs).toBe(100);
    expect(state.limits?.signal.aborted, 'the backend is told to give up').toBe(true);
    await expect(handle.sign(Buffer.from('x'), 50)).rejects.toMatchObject({ code: 'ERR_KEY_BACKEND_UNAVAILABLE' });
    // The backend answers again: no open is left pending for the next call to wait on.
    state.hangOpen = false;
    expect(signs('x', await handle.sign(Buffer.from('x'), 1000))).toBe(true);
    expect(state.opens).toBe(3);
  });

  it('never returns a signature that does not verify: counted, the breaker opened at once, the session reopened', async () => {
    const { handle, state } = handleOver('fake-j');
    const counted = (): number =>
      keyBackendBadSignatures().find(({ labels }) => labels.kid === 'kid-1' && labels.backend === 'fake-j')?.count ?? 0;
    await handle.open(1000);
    state.signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(handle.sign(Buffer.from('a.b'), 1000)).rejects.toMatchObject({
      code: 'ERR_KEY_BACKEND_UNAVAILABLE',
      message: "key kid-1 (fake-j) cannot sign: the backend's signature does not verify with the key file's public key; not returned",
    });
    expect(counted()).toBe(1);
    expect(handle.canSign).toBe(false);
    expect(state.closes, 'the session is dropped').toBe(1);
    await expect(handle.sign(Buffer.from('a.b'), 1000)).rejects.toMatchObject({ message: expect.stringContaining('circuit breaker') });
    expect(counted(), 'the breaker refuses without asking the backend').toBe(1);
  });

  it(`sends the backend at most ${KEY_BACKEND_CONCURRENCY} signatures at once; the rest wait their turn`, async () => {
    const { handle, state } = handleOver('fake-e');
    const all = await Promise.all(Array.from({ length: KEY_BACKEND_CONCURRENCY * 3 }, (_, i) => handle.sign(Buffer.from(`${i}`), 5000)));
    expect(all).toHaveLength(KEY_BACKEND_CONCURRENCY * 3);
    expect(state.maxInFlight).toBe(KEY_BACKEND_CONCURRENCY);
  });

  it(`opens the breaker after ${KEY_BACKEND_BREAKER_FAILURES} failures in a row, refusing at once and telling readiness`, async () => {
    const { handle, state } = handleOver('fake-f');
    let changes = 0;
    const stop = onKeyBackendChange(() => (changes += 1));
    try {
      state.fail = true;
      for (let i = 0; i < KEY_BACKEND_BREAKER_FAILURES; i++) {
        await expect(handle.sign(Buffer.from('x'), 1000)).rejects.toMatchObject({
          message: 'key kid-1 (fake-f) cannot sign: device unreachable',
        });
      }
      expect(handle.canSign).toBe(false);
      expect(changes).toBe(1);
      const opensBefore = state.opens;
      state.fail = false;
      await expect(handle.sign(Buffer.from('x'), 1000)).rejects.toMatchObject({
        message: expect.stringMatching(
          new RegExp(
            `^key kid-1 \\(fake-f\\) cannot sign: ${KEY_BACKEND_BREAKER_FAILURES} failures in a row; not retried for \\d s \\(circuit breaker\\)$`,
          ),
        ),
      });
      expect(state.opens, 'the breaker refuses without calling the backend').toBe(opensBefore);
    } finally {
      stop();
    }
  });

  it('refuses to sign once closed, and closes its session', async () => {
    const { handle, state } = handleOver('fake-g');
    await handle.open(1000);
    await handle.close();
    expect(state.closes).toBe(1);
    await expect(handle.sign(Buffer.from('x'), 1000)).rejects.toMatchObject({
      message: 'key kid-1 (fake-g) cannot sign: the key set was replaced',
    });
  });
});

/**
 * The status list a server issues: a claim per token with its own index, the index read back
 * from a token's claims only for this list, a revoked bit in the next token, re-signing only
 * when the list, the keys or a quarter of the ttl changed, and a full list refused with
 * UNAVAILABLE. The token is checked with jose (an implementation nobody here wrote).
 */
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportKeys, generateKeys } from '../../../src/lib.js';
import { decodeLst, statusAt } from '../../../src/revocation/status-list/codec.js';
import { createStatusListIssuer } from '../../../src/revocation/status-list/issuer.js';

const MAX = 1 << 20;
const URI = 'https://auth.example/statuslists/1';

afterEach(() => {
  vi.useRealTimers();
});

describe('createStatusListIssuer', () => {
  it('signs a statuslist+jwt that jose verifies with the public JWK Set, with sub, iat, exp, ttl and the revoked bit', async () => {
    const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
    const issuer = await createStatusListIssuer({ uri: URI, keys: () => keys, ttlSeconds: 60 });
    const claim = await issuer.claimFor();
    expect(claim).toEqual({ status_list: { idx: 0, uri: URI } });
    expect((await issuer.claimFor()).status_list.idx).toBe(1);
    const before = issuer.token();
    expect(issuer.token()).toBe(before);
    expect(issuer.revoke(claim.status_list.idx)).toBe(true);
    expect(issuer.revoke(claim.status_list.idx)).toBe(false);
    expect([issuer.isRevoked(0), issuer.isRevoked(1)]).toEqual([true, false]);
    const token = issuer.token();
    expect(token).not.toBe(before);
    const header = decodeProtectedHeader(token);
    expect(header).toMatchObject({ typ: 'statuslist+jwt', alg: 'ES256' });
    const jwk = exportKeys(keys).keys.find((key) => key.kid === header.kid);
    const { payload } = await jwtVerify(token, await importJWK(jwk as never, 'ES256'), { typ: 'statuslist+jwt', subject: URI });
    expect(payload.ttl).toBe(60);
    expect((payload.exp as number) - (payload.iat as number)).toBe(120);
    const list = payload['status_list'] as { bits: 1; lst: string };
    expect(list.bits).toBe(1);
    const bytes = decodeLst(list.lst, MAX / 8);
    expect([statusAt(bytes, 1, 0), statusAt(bytes, 1, 1)]).toEqual([1, 0]);
  });

  it("reads a token's index only from a claim of this list, within it", async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const issuer = await createStatusListIssuer({ uri: URI, keys: () => keys, ttlSeconds: 60, size: 64 });
    expect(issuer.indexOf({ status: { status_list: { idx: 5, uri: URI } } })).toBe(5);
    expect(issuer.indexOf({ sub: 'ada' })).toBeUndefined();
    expect(issuer.indexOf({ status: { status_list: { idx: 0, uri: 'https://elsewhere.example/statuslists/1' } } })).toBeUndefined();
    for (const idx of [64, -1, 1.5, '3'])
      expect(issuer.indexOf({ status: { status_list: { idx, uri: URI } } }), String(idx)).toBeUndefined();
  });

  it('signs again when the keys change, and after a quarter of the ttl, not before', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let keys = await generateKeys({ algorithms: ['ES256'] });
    const issuer = await createStatusListIssuer({ uri: URI, keys: () => keys, ttlSeconds: 60 });
    const first = issuer.token();
    vi.advanceTimersByTime(14_000);
    expect(issuer.token()).toBe(first);
    vi.advanceTimersByTime(1000);
    const second = issuer.token();
    expect(second).not.toBe(first);
    keys = await generateKeys({ algorithms: ['ES256'] });
    const third = issuer.token();
    expect(decodeProtectedHeader(third).kid).not.toBe(decodeProtectedHeader(second).kid);
  });

  it('refuses a claim with ERR_STATUS_LIST_FULL (answered UNAVAILABLE) once the list is full', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const issuer = await createStatusListIssuer({ uri: URI, keys: () => keys, ttlSeconds: 60, size: 8, blockSize: 8 });
    for (let i = 0; i < 8; i++) await issuer.claimFor();
    // Held while the next block is asked for, then refused: the store answered past the end.
    await expect(Promise.resolve().then(() => issuer.claimFor())).rejects.toThrow(
      expect.objectContaining({
        name: 'JwtGrpcError',
        code: 'ERR_STATUS_LIST_FULL',
        message: 'no status list index is free: the list is full',
      }),
    );
    expect(() => issuer.claimFor()).toThrow(expect.objectContaining({ code: 'ERR_STATUS_LIST_FULL' }));
  });

  it('refuses to sign a status list with HMAC keys only', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    const issuer = await createStatusListIssuer({ uri: URI, keys: () => keys, ttlSeconds: 60 });
    expect(() => issuer.token()).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'statusList' }));
  });
});

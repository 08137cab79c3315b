/**
 * The status list a server issues: a claim per token with its own index, the index read back
 * from a token's claims only for this list, a revoked bit in the next token, re-signing only
 * when the list, the keys or a quarter of the ttl changed, and a full list refused with
 * UNAVAILABLE, and the signing keys it refuses. The token is checked with jose (an
 * implementation nobody here wrote).
 */
import { performance } from 'node:perf_hooks';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportKeys, generateKeys } from '../../../src/lib/index.js';
import { decodeLst, statusAt } from '../../../src/revocation/status-list/codec.js';
import { MAX_BLOCK_AGE_MS } from '../../../src/revocation/status-list/allocator.js';
import { MAX_LIVE_STATUS_LISTS, createStatusListIssuer } from '../../../src/revocation/status-list/issuer.js';
import { STATUS_LIST_MEDIA_TYPE, STATUS_LIST_TYP, signStatusListToken } from '../../../src/revocation/status-list/token.js';

const MAX = 1 << 20;
const PREFIX = 'https://auth.example/statuslists/';
const URI = `${PREFIX}1`;
const lists = { uriPrefix: PREFIX, ttlSeconds: 60, maxTtlSeconds: 3600 };

/** The revoked bits of the list in a Status List Token, at `indexes`. */
async function bitsOf(token: string, keys: Awaited<ReturnType<typeof generateKeys>>, uri: string, indexes: number[]): Promise<number[]> {
  const header = decodeProtectedHeader(token);
  const jwk = exportKeys(keys).keys.find((key) => key.kid === header.kid);
  const { payload } = await jwtVerify(token, await importJWK(jwk as never, 'ES256'), { typ: 'statuslist+jwt', subject: uri });
  const bytes = decodeLst((payload['status_list'] as { lst: string }).lst, MAX / 8);
  return indexes.map((idx) => statusAt(bytes, 1, idx) as number);
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('createStatusListIssuer', () => {
  it('signs a statuslist+jwt that jose verifies with the public JWK Set, with sub, iat, exp, ttl and the revoked bit', async () => {
    const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
    const issuer = await createStatusListIssuer({ ...lists, keys: () => keys });
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
    // ES256 out of a set that holds HS256 too: the list is signed with the asymmetric key.
    expect(header).toEqual({ typ: STATUS_LIST_TYP, alg: 'ES256', kid: keys.activeEntry('ES256')?.kid });
    expect(STATUS_LIST_MEDIA_TYPE).toBe(`application/${STATUS_LIST_TYP}`);
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
    const issuer = await createStatusListIssuer({ ...lists, keys: () => keys, size: 64 });
    expect(issuer.indexOf({ status: { status_list: { idx: 5, uri: URI } } })).toBe(5);
    // Entry 5 of list 2 is position 64 + 5.
    expect(issuer.indexOf({ status: { status_list: { idx: 5, uri: `${PREFIX}2` } } })).toBe(69);
    for (const uri of [`${PREFIX}0`, `${PREFIX}02`, `${PREFIX}x`, PREFIX])
      expect(issuer.indexOf({ status: { status_list: { idx: 5, uri } } }), uri).toBeUndefined();
    expect(issuer.indexOf({ sub: 'ada' })).toBeUndefined();
    expect(issuer.indexOf({ status: { status_list: { idx: 0, uri: 'https://elsewhere.example/statuslists/1' } } })).toBeUndefined();
    for (const idx of [64, -1, 1.5, '3'])
      expect(issuer.indexOf({ status: { status_list: { idx, uri: URI } } }), String(idx)).toBeUndefined();
  });

  it('signs again when the keys change, and after a quarter of the ttl, not before', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let keys = await generateKeys({ algorithms: ['ES256'] });
    const issuer = await createStatusListIssuer({ ...lists, keys: () => keys });
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

  it('rolls a full list over to the next uri, serves both, and marks a revocation in the list it names', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const issuer = await createStatusListIssuer({ ...lists, keys: () => keys, size: 8, blockSize: 8 });
    const claims = [];
    for (let i = 0; i < 10; i++) claims.push(await issuer.claimFor());
    expect(claims.map((claim) => `${claim.status_list.uri.slice(PREFIX.length)}:${claim.status_list.idx}`)).toEqual([
      ...[0, 1, 2, 3, 4, 5, 6, 7].map((idx) => `1:${idx}`),
      '2:0',
      '2:1',
    ]);
    expect(issuer.uri).toBe(`${PREFIX}2`);
    expect(issuer.uris()).toEqual([URI, `${PREFIX}2`]);
    const position = issuer.indexOf({ status: claims[9] }) as number;
    expect(position).toBe(9);
    issuer.revoke(position);
    expect([issuer.isRevoked(9), issuer.isRevoked(1)]).toEqual([true, false]);
    expect(await bitsOf(issuer.token(`${PREFIX}2`), keys, `${PREFIX}2`, [0, 1])).toEqual([0, 1]);
    expect(await bitsOf(issuer.token(URI), keys, URI, [0, 1])).toEqual([0, 0]);
    // A list no process has written to yet, within reach, is served all VALID: another process may issue into it.
    expect(await bitsOf(issuer.token(`${PREFIX}5`), keys, `${PREFIX}5`, [0, 1])).toEqual([0, 0]);
    for (const uri of [`${PREFIX}${2 + MAX_LIVE_STATUS_LISTS + 1}`, 'https://elsewhere.example/statuslists/1'])
      expect(() => issuer.token(uri), uri).toThrow(expect.objectContaining({ code: 'ERR_UNKNOWN_STATUS_LIST' }));
  });

  it('retires a list once every token in it has expired, and never holds more than MAX_LIVE_STATUS_LISTS', async () => {
    let nowMs = performance.now();
    vi.spyOn(performance, 'now').mockImplementation(() => nowMs);
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const issuer = await createStatusListIssuer({ ...lists, maxTtlSeconds: 60, keys: () => keys, size: 8, blockSize: 8 });
    for (let i = 0; i < 9; i++) await issuer.claimFor();
    expect(issuer.uris()).toEqual([URI, `${PREFIX}2`]);
    // List 1 closed when list 2 opened: its last token expires within the longest lifetime, plus the age a block may reach.
    nowMs += 60_000 + MAX_BLOCK_AGE_MS - 1;
    expect(issuer.uris()).toEqual([URI, `${PREFIX}2`]);
    nowMs += 2;
    expect(issuer.uris()).toEqual([`${PREFIX}2`]);
    while (issuer.uris().length < MAX_LIVE_STATUS_LISTS) await issuer.claimFor();
    // The newest list fills up; the one after would be one too many, and stays closed until the oldest retires.
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => Promise.resolve().then(() => issuer.claimFor())));
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason as Error);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({
      code: 'ERR_STATUS_LIST_FULL',
      message: expect.stringContaining(`${MAX_LIVE_STATUS_LISTS} lists are live`),
    });
    expect(issuer.uris()).toHaveLength(MAX_LIVE_STATUS_LISTS);
  });

  it('refuses to sign a status list with HMAC keys only', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    const issuer = await createStatusListIssuer({ ...lists, keys: () => keys });
    expect(() => issuer.token()).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'statusList',
        message:
          'option statusList: needs an asymmetric signing key held in memory (RS*, PS*, ES*, EdDSA; not an HSM or KMS key): verifiers cannot check an HMAC-signed status list',
      }),
    );
  });

  it('refuses to sign with an algorithm the set has no active key of, naming it', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    expect(() => signStatusListToken(keys, 'RS256', { sub: 'x', iat: 0, exp: 1, ttl: 1, status_list: { bits: 1, lst: '' } })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'statusList',
        message: 'option statusList: no active RS256 key in memory',
      }),
    );
  });
});

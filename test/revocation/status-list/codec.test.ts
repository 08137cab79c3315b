/**
 * The Token Status List pieces against draft-ietf-oauth-status-list-20: the section 4.1
 * examples and the Appendix C test vectors, the list, index allocation, and the signed
 * Status List Token checked with jose (an implementation nobody here wrote).
 */
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { exportKeys, generateKeys } from '../../src/lib.js';
import { decodeLst, encodeLst, statusAt } from '../../src/revocation/status-list/codec.js';
import { StatusList } from '../../src/revocation/status-list/list.js';
import { IndexAllocator, localReserve } from '../../src/revocation/status-list/allocator.js';
import { createStatusListIssuer } from '../../src/revocation/status-list/issuer.js';

const MAX = 1 << 20;

/** Appendix C: the indexes set in each long vector (status value per index). */
const LONG_1 = [0, 1993, 25460, 159495, 495669, 554353, 645645, 723232, 854545, 934534, 1000345];
const LONG_1_LST =
  'eNrt3AENwCAMAEGogklACtKQPg9LugC9k_ACvreiogEAAKkeCQAAAAAAAAAAAAAAAAAAAIBylgQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAXG9IAAAAAAAAAPwsJAAAAAAAAAAAAAAAvhsSAAAAAAAAAAAA7KpLAAAAAAAAAAAAAAAAAAAAAJsLCQAAAAAAAAAAADjelAAAAAAAAAAAKjDMAQAAAACAZC8L2AEb';
const LONG_2: ReadonlyArray<[number, number]> = [
  [0, 1], [1993, 2], [25460, 1], [159495, 3], [495669, 1], [554353, 1], [645645, 2], [723232, 1], [854545, 1], [934534, 2], [1000345, 3],
];
const LONG_2_LST =
  'eNrt2zENACEQAEEuoaBABP5VIO01fCjIHTMStt9ovGVIAAAAAABAbiEBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEB5WwIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAID0ugQAAAAAAAAAAAAAAAAAQG12SgAAAAAAAAAAAAAAAAAAAAAAAAAAAOCSIQEAAAAAAAAAAAAAAAAAAAAAAAD8ExIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAwJEuAQAAAAAAAAAAAAAAAAAAAAAAAMB9SwIAAAAAAAAAAAAAAAAAAACoYUoAAAAAAAAAAAAAAEBqH81gAQw';

describe('status list codec (draft 20 section 4.1, Appendix C)', () => {
  it('encodes the 1-bit example of section 4.1 byte for byte and reads it back LSB first', () => {
    expect(encodeLst(Uint8Array.of(0xb9, 0xa3))).toBe('eNrbuRgAAhcBXQ');
    const bytes = decodeLst('eNrbuRgAAhcBXQ', 16);
    const expected = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1];
    expect(expected.map((_, idx) => statusAt(bytes, 1, idx))).toEqual(expected);
    expect(statusAt(bytes, 1, 16)).toBeUndefined();
  });

  it('encodes the 2-bit example of section 4.1 and reads its values', () => {
    expect(encodeLst(Uint8Array.of(0xc9, 0x44, 0xf9))).toBe('eNo76fITAAPfAgc');
    const bytes = decodeLst('eNo76fITAAPfAgc', 3);
    expect([...Array(12).keys()].map((idx) => statusAt(bytes, 2, idx))).toEqual([1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]);
  });

  it('builds the byte array of the 1-bit test vector of Appendix C from a StatusList of 2^20 entries', () => {
    const list = new StatusList(MAX);
    for (const idx of LONG_1) list.set(idx);
    const ours = list.json();
    expect(ours.bits).toBe(1);
    const bytes = decodeLst(LONG_1_LST, MAX / 8);
    // The compressed bytes may differ (another zlib build, same level); the array may not.
    expect(decodeLst(ours.lst, MAX / 8).equals(bytes)).toBe(true);
    expect(bytes.length).toBe(MAX / 8);
    const set: number[] = [];
    for (let idx = 0; idx < MAX; idx++) if (statusAt(bytes, 1, idx) === 1) set.push(idx);
    expect(set).toEqual(LONG_1);
  });

  it('decodes the 2-bit test vector of Appendix C', () => {
    const bytes = decodeLst(LONG_2_LST, MAX / 4);
    for (const [idx, value] of LONG_2) expect(statusAt(bytes, 2, idx)).toBe(value);
    expect(statusAt(bytes, 2, 1)).toBe(0);
  });

  it('refuses an lst that inflates past the bound (a ZLIB bomb) or is not base64url', () => {
    const bomb = encodeLst(new Uint8Array(1 << 22));
    expect(() => decodeLst(bomb, MAX / 8)).toThrow();
    expect(() => decodeLst('not base64url!', 16)).toThrow('base64url');
  });
});

describe('StatusList', () => {
  it('sets bits, re-encodes only after a change, and refuses indexes outside it', () => {
    const list = new StatusList(64);
    const empty = list.json();
    expect(list.json()).toBe(empty);
    expect(list.set(9)).toBe(true);
    expect(list.set(9)).toBe(false);
    expect(list.isSet(9) && !list.isSet(8)).toBe(true);
    const once = list.json();
    expect(once).not.toBe(empty);
    expect(list.json()).toBe(once);
    expect(() => list.set(64)).toThrow(RangeError);
    expect(() => list.set(-1)).toThrow(RangeError);
  });
});

describe('index allocation', () => {
  it('gives two allocators sharing one reserve disjoint indexes, block by block', async () => {
    const reserve = localReserve();
    const a = new IndexAllocator({ reserve, size: MAX, blockSize: 8 });
    const b = new IndexAllocator({ reserve, size: MAX, blockSize: 8 });
    await Promise.all([a.start(), b.start()]);
    const seen = new Set<number>();
    for (let round = 0; round < 200; round++) {
      for (const allocator of [a, b]) {
        const idx = allocator.next();
        if (idx === undefined) continue;
        expect(seen.has(idx)).toBe(false);
        seen.add(idx);
      }
      // The next block is reserved in the background.
      await Promise.resolve();
    }
    expect(seen.size).toBeGreaterThan(300);
  });

  it('answers undefined once the list is full, never an index past it', async () => {
    const allocator = new IndexAllocator({ reserve: localReserve(), size: 16, blockSize: 8 });
    await allocator.start();
    const got: Array<number | undefined> = [];
    for (let i = 0; i < 20; i++) {
      got.push(allocator.next());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(got.filter((idx) => idx !== undefined)).toEqual([...Array(16).keys()]);
    expect(got.slice(16)).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('createStatusListIssuer', () => {
  it('signs a statuslist+jwt that jose verifies with the public JWK Set, with sub, iat, exp, ttl and the revoked bit', async () => {
    const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
    const uri = 'https://auth.example/statuslists/1';
    const issuer = await createStatusListIssuer({ uri, keys: () => keys, ttlSeconds: 60 });
    const claim = issuer.claimFor();
    expect(claim).toEqual({ status_list: { idx: 0, uri } });
    expect(issuer.indexOf({ sub: 'ada', status: claim })).toBe(0);
    expect(issuer.indexOf({ sub: 'ada' })).toBeUndefined();
    expect(issuer.indexOf({ status: { status_list: { idx: 0, uri: 'https://elsewhere.example/statuslists/1' } } })).toBeUndefined();
    expect(issuer.indexOf({ status: { status_list: { idx: 1 << 20, uri } } })).toBeUndefined();
    expect(issuer.claimFor().status_list.idx).toBe(1);
    const before = issuer.token();
    expect(issuer.token()).toBe(before);
    issuer.revoke(claim.status_list.idx);
    const token = issuer.token();
    expect(token).not.toBe(before);
    const header = decodeProtectedHeader(token);
    expect(header).toMatchObject({ typ: 'statuslist+jwt', alg: 'ES256' });
    const jwk = exportKeys(keys).keys.find((key) => key.kid === header.kid);
    const { payload } = await jwtVerify(token, await importJWK(jwk as never, 'ES256'), { typ: 'statuslist+jwt', subject: uri });
    expect(payload.ttl).toBe(60);
    expect((payload.exp as number) - (payload.iat as number)).toBe(120);
    const list = payload['status_list'] as { bits: 1; lst: string };
    expect(list.bits).toBe(1);
    const bytes = decodeLst(list.lst, MAX / 8);
    expect([statusAt(bytes, 1, 0), statusAt(bytes, 1, 1)]).toEqual([1, 0]);
  });

  it('refuses to sign a status list with HMAC keys only', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    const issuer = await createStatusListIssuer({ uri: 'https://auth.example/statuslists/1', keys: () => keys, ttlSeconds: 60 });
    expect(() => issuer.token()).toThrow(/asymmetric/);
  });
});

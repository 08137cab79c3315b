/**
 * The Status List Token's signature: the asymmetric in-memory key it takes, HMAC-only key sets
 * refused (a verifier could not check the list), and a statuslist+jwt that jose verifies.
 */
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../../bench/kit/thrown.js';
import { JwtGrpcError } from '../../../src/errors.js';
import { exportKeys, generateKeys } from '../../../src/lib.js';
import {
  STATUS_LIST_MEDIA_TYPE,
  STATUS_LIST_TYP,
  signStatusListToken,
  statusListAlgorithm,
} from '../../../src/revocation/status-list/token.js';

describe('statusListAlgorithm', () => {
  it('picks the asymmetric algorithm of a set that also holds HMAC keys', async () => {
    expect(statusListAlgorithm(await generateKeys({ algorithms: ['HS256', 'ES256'] }))).toBe('ES256');
  });

  it('refuses a set of HMAC keys only with ERR_INVALID_OPTION on statusList', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    const err = thrownBy(JwtGrpcError, () => statusListAlgorithm(keys));
    expect([err.code, err.field]).toEqual(['ERR_INVALID_OPTION', 'statusList']);
    expect(err.message).toBe(
      'option statusList: needs an asymmetric signing key held in memory (RS*, PS*, ES*, EdDSA; not an HSM or KMS key): verifiers cannot check an HMAC-signed status list',
    );
  });
});

describe('signStatusListToken', () => {
  it('signs a statuslist+jwt with the kid of the active key, which jose verifies', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const claims = {
      sub: 'https://auth.example/statuslists/1',
      iat: 1_700_000_000,
      exp: 4_000_000_000,
      ttl: 60,
      status_list: { bits: 1 as const, lst: 'eNoDAAAAAAE' },
    };
    const token = signStatusListToken(keys, 'ES256', claims);
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: 'ES256', typ: STATUS_LIST_TYP, kid: keys.activeEntry('ES256')?.kid });
    const jwk = exportKeys(keys).keys.find((key) => key.kid === header.kid);
    const { payload } = await jwtVerify(token, await importJWK(jwk as never, 'ES256'), { typ: STATUS_LIST_TYP });
    expect(payload).toEqual(claims);
    expect(STATUS_LIST_MEDIA_TYPE).toBe(`application/${STATUS_LIST_TYP}`);
  });

  it('refuses an algorithm the set has no active key of, naming it', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const err = thrownBy(JwtGrpcError, () =>
      signStatusListToken(keys, 'RS256', { sub: 'x', iat: 0, exp: 1, ttl: 1, status_list: { bits: 1, lst: '' } }),
    );
    expect([err.code, err.field, err.message]).toEqual([
      'ERR_INVALID_OPTION',
      'statusList',
      'option statusList: no active RS256 key in memory',
    ]);
  });
});

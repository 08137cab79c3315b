/**
 * The Status List Token in JWT format, draft-ietf-oauth-status-list-20 section 5.1
 * (https://datatracker.ietf.org/doc/html/draft-ietf-oauth-status-list-20#section-5.1).
 */
import { Buffer } from 'node:buffer';
import { ALGORITHM_SPECS, type Algorithm } from '../../algorithms/index.js';
import { JwtGrpcError } from '../../base/errors.js';
import type { KeySet } from '../../keys/key-set.js';
import type { StatusListJson } from './codec.js';

/** The JWT `typ` section 5.1 requires, and the media type of section 8.1 that serves it. */
export const STATUS_LIST_TYP = 'statuslist+jwt';
export const STATUS_LIST_MEDIA_TYPE = 'application/statuslist+jwt';

/** The claims of a Status List Token (section 5.1). */
export interface StatusListClaims {
  /** The list's URI: equal to the `uri` of the `status_list` claim of every token it covers. */
  readonly sub: string;
  readonly iat: number;
  readonly exp: number;
  readonly ttl: number;
  readonly status_list: StatusListJson;
}

/**
 * The algorithm a KeySet signs Status List Tokens with: the first asymmetric one it signs
 * with. Never an HMAC algorithm: section 11.6 allows a MAC only where the relying party
 * shares the secret, and remote verifiers here get public keys only (GetJwks). @internal
 */
export function statusListAlgorithm(keys: KeySet): Algorithm {
  // In memory: the list is re-signed synchronously on every change; an HSM or KMS key (a handle) does not sign it.
  const alg = keys.signingAlgorithms.find(
    (candidate) => !ALGORITHM_SPECS[candidate].symmetric && keys.activeEntry(candidate)?.signingKey !== undefined,
  );
  if (alg === undefined) {
    throw new JwtGrpcError(
      'ERR_INVALID_OPTION',
      'option statusList: needs an asymmetric signing key held in memory (RS*, PS*, ES*, EdDSA; not an HSM or KMS key): verifiers cannot check an HMAC-signed status list',
      {
        field: 'statusList',
      },
    );
  }
  return alg;
}

/** Signs `claims` as a Status List Token with the active key of `alg` in `keys`. @internal */
export function signStatusListToken(keys: KeySet, alg: Algorithm, claims: StatusListClaims): string {
  const entry = keys.activeEntry(alg);
  if (entry?.signingKey === undefined)
    throw new JwtGrpcError('ERR_INVALID_OPTION', `option statusList: no active ${alg} key in memory`, { field: 'statusList' });
  const header = Buffer.from(JSON.stringify({ alg, typ: STATUS_LIST_TYP, kid: entry.kid })).toString('base64url');
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${entry.spec.prepareSign(entry.signingKey)(Buffer.from(input))}`;
}

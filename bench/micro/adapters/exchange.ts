/**
 * The `exchange` rows: a token exchange (RFC 8693) of one of the issuer's own tokens by
 * JwtServiceCore, the whole decision without a transport (verify the subject token, check
 * it, build and sign the new one), and its floor, `node:crypto`: the ES256 verify of that
 * subject token's signing input and the sign of one of the issued token's size, DER with the
 * bare KeyObjects as src/algorithms/ecdsa.ts calls them. The budget of token exchange: the
 * exchange within 1.15x of its floor (docs/token-exchange.md).
 */
import { sign, verify } from 'node:crypto';
import { JwtServiceCore } from '../../../src/jwt-service/core.js';
import { resolveServiceOptions } from '../../../src/jwt-service/options.js';
import { TrustedIssuers } from '../../../src/exchange/remote/issuers.js';
import type { ExchangeTokenRequest } from '../../../src/jwt-service/messages.js';
import { silentLogger } from '../../../src/lib/index.js';
import type { MicroLibrary, OperationFn } from './types.js';
import type { PrepareContext } from './types.js';

/** The floor's name in the table: Node's own ES256, no JWT around it. */
const FLOOR = 'node:crypto';
const SUBJECT_AUDIENCE = 'orders';

/** The exchange of one of our tokens, and the tokens its floor verifies and signs. */
interface PreparedExchange {
  readonly exchange: OperationFn;
  readonly subjectToken: string;
  readonly issuedToken: string;
}

/** An exchange of a token of ours for audience `billing`, its scope narrowed; the verifier's cache off, so each call verifies in full. */
export async function prepareExchange({ keys, key, claims }: PrepareContext): Promise<PreparedExchange> {
  const options = resolveServiceOptions({ issuer: 'https://bench.example', logger: silentLogger, verifyCache: false });
  const trust = { self: { audiences: [SUBJECT_AUDIENCE] } };
  const core = new JwtServiceCore({
    options,
    keys: keys.keySet,
    exchange: { trust: (own) => new TrustedIssuers(trust, own, { clockToleranceSeconds: 5, logger: silentLogger }), algorithm: key.alg },
  });
  const subject = await core.generate({
    algorithm: key.alg,
    subject: claims.next().sub,
    audience: SUBJECT_AUDIENCE,
    ttl_seconds: 3600,
    claims_json: '{"scope":"invoices:read invoices:write"}',
  });
  const request: ExchangeTokenRequest = {
    subject_token: subject.jwt,
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    actor_token: '',
    actor_token_type: '',
    audience: 'billing',
    resource: '',
    scope: 'invoices:read',
    requested_token_type: '',
  };
  const issued = await core.exchange(request);
  return {
    exchange: async () => {
      const answer = await core.exchange(request);
      if (answer.expires_in < 1) throw new Error('jwt-grpc: the exchange issued an expired token');
    },
    subjectToken: subject.jwt,
    issuedToken: issued.access_token,
  };
}

/** The signing input of a compact JWS: all but its last segment. */
function signingInput(token: string): Buffer {
  return Buffer.from(token.slice(0, token.lastIndexOf('.')));
}

/** node:crypto's ES256 verify and sign of the exchange's sizes: its floor, with no sign, verify or sign+verify row of its own. */
export const nodeCryptoExchangeFloor: MicroLibrary = {
  name: FLOOR,
  supports: (alg) => alg === 'ES256',
  async prepare(context) {
    const { subjectToken, issuedToken } = await prepareExchange(context);
    const { signingKey, verificationKey } = context.key;
    const subjectInput = signingInput(subjectToken);
    const issuedInput = signingInput(issuedToken);
    const signature = sign('sha256', subjectInput, signingKey);
    return {
      exchange: () => {
        if (!verify('sha256', subjectInput, verificationKey, signature)) throw new Error(`${FLOOR}: the signature did not verify`);
        sign('sha256', issuedInput, signingKey);
      },
    };
  },
};

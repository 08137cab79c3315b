import { sign, verify } from 'node:crypto';
import { checkSubject, type MicroLibrary } from './types.js';

const NAME = 'node:crypto p1363';
const HASH = { ES256: 'sha256' } as const;

/**
 * ECDSA JWS the direct way: node:crypto asked for the raw r||s form with
 * `dsaEncoding: 'ieee-p1363'`, KeyObjects prepared once. Not a library anyone picks,
 * but the row that shows why ours signs in DER with the bare KeyObject and converts in
 * JavaScript (src/algorithms/ecdsa.ts): on Node 24 this path costs about twice as much.
 */
export const nodeCryptoP1363: MicroLibrary = {
  name: NAME,
  supports: (alg) => alg === 'ES256',
  async prepare({ key, claims }) {
    const hash = HASH[key.alg as keyof typeof HASH];
    const header = Buffer.from(JSON.stringify({ alg: key.alg, typ: 'JWT', kid: key.kid })).toString('base64url') + '.';
    const signOptions = { key: key.signingKey, dsaEncoding: 'ieee-p1363' as const };
    const verifyOptions = { key: key.verificationKey, dsaEncoding: 'ieee-p1363' as const };
    const signClaims = (c: object): string => {
      const input = header + Buffer.from(JSON.stringify(c)).toString('base64url');
      return input + '.' + sign(hash, Buffer.from(input), signOptions).toString('base64url');
    };
    const verifyToken = (token: string): unknown => {
      const dot = token.lastIndexOf('.');
      const ok = verify(hash, Buffer.from(token.slice(0, dot)), verifyOptions, Buffer.from(token.slice(dot + 1), 'base64url'));
      if (!ok) throw new Error(`${NAME}: signature does not verify`);
      const payload = JSON.parse(Buffer.from(token.slice(token.indexOf('.') + 1, dot), 'base64url').toString()) as { sub?: unknown };
      return payload.sub;
    };
    const fixedToken = signClaims(claims.next());
    return {
      sign: () => signClaims(claims.next()),
      verify: () => verifyToken(fixedToken),
      'sign+verify': () => {
        const c = claims.next();
        checkSubject(NAME, c.sub, verifyToken(signClaims(c)));
      },
    };
  },
};

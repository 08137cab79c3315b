import jwt from 'jsonwebtoken';
import type { BenchAlgorithm } from '../../options/algorithms.js';
import { checkSubject, type MicroLibrary } from './types.js';

const NAME = 'jsonwebtoken';

/** jsonwebtoken 9 with KeyObjects prepared once (no PEM or string secret parsed per call). */
export const jsonwebtoken: MicroLibrary = {
  name: NAME,
  // jsonwebtoken 9 has no EdDSA.
  supports: (alg: BenchAlgorithm) => alg !== 'EdDSA',
  async prepare({ key, claims }) {
    const algorithm = key.alg as jwt.Algorithm;
    const signOptions: jwt.SignOptions = { algorithm, keyid: key.kid };
    const verifyOptions: jwt.VerifyOptions & { complete?: false } = { algorithms: [algorithm] };
    const sign = (): string => jwt.sign({ ...claims.next() }, key.signingKey, signOptions);
    const verify = (token: string): unknown => (jwt.verify(token, key.verificationKey, verifyOptions) as jwt.JwtPayload).sub;
    const fixedToken = sign();
    return {
      sign,
      verify: () => verify(fixedToken),
      'sign+verify': () => {
        const c = claims.next();
        checkSubject(NAME, c.sub, verify(jwt.sign({ ...c }, key.signingKey, signOptions)));
      },
    };
  },
};

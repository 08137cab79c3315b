import { createSigner, createVerifier } from 'fast-jwt';
import { checkSubject, type MicroLibrary } from './types.js';

const NAME = 'fast-jwt';

/** fast-jwt as the ordinary Node server (bench/peers/node-fast-jwt) uses it: createSigner/createVerifier made once. */
export const fastJwt: MicroLibrary = {
  name: NAME,
  supports: () => true,
  async prepare({ key, claims }) {
    const signer = createSigner({ key: key.signingPemOrSecret, algorithm: key.alg, kid: key.kid });
    const verifier = createVerifier({ key: key.verificationPemOrSecret, algorithms: [key.alg] });
    const fixedToken = signer({ ...claims.next() });
    return {
      sign: () => signer({ ...claims.next() }),
      verify: () => (verifier(fixedToken) as { sub?: unknown }).sub,
      'sign+verify': () => {
        const c = claims.next();
        checkSubject(NAME, c.sub, (verifier(signer({ ...c })) as { sub?: unknown }).sub);
      },
    };
  },
};

import { ANY_AUDIENCE, createSigner, createVerifier } from '../../../src/lib/index.js';
import { checkSubject, type MicroLibrary } from './types.js';
import { prepareExchange } from './exchange.js';

const NAME = 'jwt-grpc';

/** This package's token functions; the verifier's cache is off so every verify does the work. */
export const ours: MicroLibrary = {
  name: NAME,
  supports: () => true,
  async prepare(context) {
    const { keys, key, claims } = context;
    const signer = createSigner(keys.keySet);
    // The micro claims carry no aud, as the other libraries' runs check none.
    const verifier = createVerifier(keys.keySet, { audience: ANY_AUDIENCE, cache: false });
    const verifyOrThrow = (token: string): unknown => {
      const result = verifier.verify(token);
      if (!result.valid) throw new Error(`${NAME}: ${result.reason}: ${result.message}`);
      return result.payload.sub;
    };
    const fixed = claims.next();
    const fixedToken = signer.sign(key.alg, { ...fixed }).token;
    return {
      exchange: (await prepareExchange(context)).exchange,
      sign: () => signer.sign(key.alg, { ...claims.next() }).token,
      verify: () => verifyOrThrow(fixedToken),
      'sign+verify': () => {
        const c = claims.next();
        checkSubject(NAME, c.sub, verifyOrThrow(signer.sign(key.alg, { ...c }).token));
      },
    };
  },
};

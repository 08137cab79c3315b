import { importJWK, jwtVerify, SignJWT } from 'jose';
import { checkSubject, type MicroLibrary } from './types.js';

const NAME = 'jose';

/** jose 6 used directly: keys imported once, asynchronous (WebCrypto) sign and verify. */
export const jose: MicroLibrary = {
  name: NAME,
  supports: () => true,
  async prepare({ key, claims }) {
    const signingKey = await importJWK(key.privateJwk, key.alg);
    const verificationKey = await importJWK(key.publicJwk, key.alg);
    const header = { alg: key.alg, typ: 'JWT', kid: key.kid };
    const options = { algorithms: [key.alg] };
    const sign = (): Promise<string> => {
      const c = claims.next();
      return new SignJWT({ ...c }).setProtectedHeader(header).sign(signingKey);
    };
    const fixedToken = await sign();
    return {
      sign,
      verify: async () => (await jwtVerify(fixedToken, verificationKey, options)).payload.sub,
      'sign+verify': async () => {
        const c = claims.next();
        const token = await new SignJWT({ ...c }).setProtectedHeader(header).sign(signingKey);
        checkSubject(NAME, c.sub, (await jwtVerify(token, verificationKey, options)).payload.sub);
      },
    };
  },
};

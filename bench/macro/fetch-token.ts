import { createJwtClient, createSigner, loadKeys, silentLogger } from '../../src/lib/index.js';

/**
 * Asks the server under test for one token (GenerateJwt through the package's own client):
 * the fixed token of its VerifyJwt cell, so each server verifies a token in its own format.
 */
export async function fetchToken(port: number, algorithm: string): Promise<string> {
  const client = createJwtClient(`127.0.0.1:${port}`, { deadlineMs: 10_000 });
  try {
    const { jwt } = await client.generateJwt({ algorithm });
    if (jwt === '') throw new Error('the response has no jwt');
    return jwt;
  } catch (error) {
    throw new Error(`GenerateJwt(${algorithm}) for the VerifyJwt cell failed: ${(error as Error).message}`);
  } finally {
    client.close();
  }
}

/**
 * A token signed with the run's key file (the one every server of the run loads), valid
 * for two hours: the bearer token of the protected cells, which the issuer beside the
 * protected service would issue itself. Signed here, not fetched, so that no server of
 * the cell has served a call before its warm-up.
 */
export async function signToken(keysFile: string, algorithm: string): Promise<string> {
  const signer = createSigner(await loadKeys(keysFile, { logger: silentLogger }));
  const now = Math.floor(Date.now() / 1000);
  return signer.sign(algorithm, { sub: 'bench@example.com', iat: now, exp: now + 7200 }).token;
}

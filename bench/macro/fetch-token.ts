import { createJwtClient } from '../../src/lib.js';

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

/**
 * The discovery documents (src/discovery/documents.ts): the issuer checked once and refused
 * by name, the JWK Set without secrets, the OpenID configuration naming the issuer and the
 * jwks_uri under it, listing only algorithms a published key verifies.
 */
import { describe, expect, it } from 'vitest';
import { JWKS_SUFFIX, configurationDocument, issuerPath, jwksDocument } from '../../src/discovery/documents.js';
import { strongEtag } from '../../src/documents/etag.js';
import { exportKeys, generateKeys } from '../../src/lib/index.js';

describe('issuerPath', () => {
  it.each([
    ['https://auth.example', ''],
    ['https://auth.example/', ''],
    ['https://auth.example/tenant-a', '/tenant-a'],
    ['http://127.0.0.1:8080/a/b//', '/a/b'],
  ])('%s: path %j', (issuer, path) => {
    expect(issuerPath(issuer)).toBe(path);
  });

  it.each([
    [undefined, 'option issuer: is required to serve discovery on the HTTP port: the documents must name the issuer the tokens carry'],
    ['', 'option issuer: is required to serve discovery'],
    ['auth.example', 'option issuer: must be an http(s) URL to serve discovery, got "auth.example"'],
    ['ftp://auth.example', 'option issuer: must be an http(s) URL without query or fragment to serve discovery, got "ftp://auth.example"'],
    ['https://auth.example/?tenant=a', 'without query or fragment'],
    ['https://auth.example/#a', 'without query or fragment'],
    ['https://auth.example/?', 'without query or fragment'],
  ])('refuses %j', (issuer, message) => {
    expect(() => issuerPath(issuer)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'issuer', message: expect.stringContaining(message) }),
    );
  });

  it('names the option as its caller wrote it', () => {
    expect(() => issuerPath(5, '--issuer')).toThrow(expect.objectContaining({ field: '--issuer' }));
  });
});

describe('jwksDocument and configurationDocument', () => {
  it('publish the public keys with a strong ETag of their bytes', async () => {
    const keys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
    const jwks = jwksDocument(keys);
    expect(JSON.parse(jwks.body.toString())).toEqual(exportKeys(keys));
    expect(jwks.etag).toBe(strongEtag(jwks.body));
    expect(jwks.body.toString()).not.toContain('"d"');
    expect(jwks.body.toString()).not.toContain('"k"');
  });

  it('name the issuer byte for byte, the jwks_uri under it, and no HMAC algorithm', async () => {
    const keys = await generateKeys({ algorithms: ['HS256', 'ES256', 'EdDSA'] });
    const document = JSON.parse(configurationDocument('https://auth.example/tenant/', keys).body.toString());
    expect(document).toEqual({
      issuer: 'https://auth.example/tenant/',
      jwks_uri: `https://auth.example/tenant${JWKS_SUFFIX}`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256', 'EdDSA'],
    });
  });
});

/**
 * The caller a client certificate names: the subjectAltName text Node gives read entry by
 * entry (its JSON-escaped values included), the id chosen from it, and no caller without a
 * verified certificate. The certificate path itself runs over real mutual TLS in
 * caller-identity.test.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callerIdOf, callerOfCertificate, callerOfSocket, certificateThumbprint, subjectAltNames } from '../../src/transport/caller.js';

describe('subjectAltNames', () => {
  it('reads each entry as [type, value], and none from no text', () => {
    expect(subjectAltNames('DNS:a.example, IP Address:127.0.0.1, URI:spiffe://example.org/x')).toEqual([
      ['DNS', 'a.example'],
      ['IP Address', '127.0.0.1'],
      ['URI', 'spiffe://example.org/x'],
    ]);
    expect(subjectAltNames(undefined)).toEqual([]);
    expect(subjectAltNames('')).toEqual([]);
  });

  it('reads the values Node escapes as JSON strings as one value, so a comma cannot forge an entry', () => {
    expect(subjectAltNames('DNS:"a.example, DNS:evil.example", URI:spiffe://example.org/x')).toEqual([
      ['DNS', 'a.example, DNS:evil.example'],
      ['URI', 'spiffe://example.org/x'],
    ]);
    expect(subjectAltNames('URI:"urn:a\\"b"')).toEqual([['URI', 'urn:a"b']]);
  });
});

describe('callerIdOf', () => {
  it('names the caller by its first URI SAN as written', () => {
    expect(callerIdOf('DNS:a.example, URI:spiffe://example.org/one, URI:spiffe://example.org/two')).toBe('spiffe://example.org/one');
  });

  it('else by dns: and its first DNS SAN', () => {
    expect(callerIdOf('IP Address:10.0.0.1, DNS:a.example, DNS:b.example')).toBe('dns:a.example');
  });

  it('names nobody with neither, or with no SAN at all', () => {
    expect(callerIdOf('IP Address:10.0.0.1, email:a@example.org')).toBeUndefined();
    expect(callerIdOf(undefined)).toBeUndefined();
  });

  it('does not take a DNS name smuggled inside a quoted value', () => {
    expect(callerIdOf('email:"x, URI:spiffe://evil"')).toBeUndefined();
  });
});

describe('certificateThumbprint', () => {
  it('is the base64url SHA-256 of the DER bytes (RFC 8705 x5t#S256)', () => {
    const der = Buffer.from('certificate bytes');
    expect(certificateThumbprint(der)).toBe(createHash('sha256').update(der).digest('base64url'));
    expect(certificateThumbprint(der)).not.toMatch(/[+/=]/);
  });
});

describe('callerOfCertificate and callerOfSocket', () => {
  it('give no caller without a certificate, or with an empty one', () => {
    expect(callerOfCertificate(undefined)).toBeUndefined();
    expect(callerOfCertificate({})).toBeUndefined();
    expect(callerOfCertificate({ raw: Buffer.alloc(0) })).toBeUndefined();
  });

  it('give no caller on a socket that did not verify its peer, or that is not TLS', () => {
    let asked = false;
    const getPeerCertificate = (): object => {
      asked = true;
      return { raw: Buffer.from('x') };
    };
    expect(callerOfSocket({ authorized: false, getPeerCertificate })).toBeUndefined();
    expect(callerOfSocket({})).toBeUndefined();
    expect(asked).toBe(false);
  });
});

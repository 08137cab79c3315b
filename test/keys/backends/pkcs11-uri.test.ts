/**
 * RFC 7512 PKCS#11 URIs as key files name HSM keys: parsed strictly, so that a misspelt
 * attribute is refused by name rather than ignored (and another key, or none, selected),
 * and a PIN is never written into a reference.
 */
import { describe, expect, it } from 'vitest';
import { parsePkcs11Uri, pinSourceFrom } from '../../../src/keys/backends/pkcs11-uri.js';

describe('parsePkcs11Uri', () => {
  it('reads the token, the key and how to reach them, percent-decoded', () => {
    expect(
      parsePkcs11Uri(
        'pkcs11:token=my%20token;object=es256-1;id=%01%ff;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:hsm-pin.txt',
      ),
    ).toEqual({
      token: 'my token',
      serial: undefined,
      slotId: undefined,
      object: 'es256-1',
      id: Buffer.from([1, 255]),
      modulePath: '/usr/lib/softhsm/libsofthsm2.so',
      pinSource: 'file:hsm-pin.txt',
    });
  });

  it.each([
    ['pkcs11:token=jwt;objekt=es256', /unknown path attribute "objekt" \(known: token, serial, slot-id, object, id, type\)/],
    ['pkcs11:token=jwt;object=a?module=/x.so', /unknown query attribute "module"/],
    ['pkcs11:token=jwt;object=a?pin-value=1234', /pin-value is refused/],
    ['pkcs11:token=jwt', /names no key/],
    ['pkcs11:token=jwt;object=a;type=public', /type="public": a signing key is type=private/],
    ['pkcs11:token=jwt;object=a;object=b', /object is given twice/],
    ['pkcs11:object=a%zz', /bad percent-encoding/],
    ['pkcs11:object=a?pin-source=env:PIN', /pin-source must be file:PATH/],
    ['pkcs11:slot-id=x;object=a', /slot-id must be a decimal number/],
    ['pkcs12:object=a', /must start with "pkcs11:"/],
  ])('refuses %s', (uri, message) => {
    expect(() => parsePkcs11Uri(uri)).toThrow(message);
  });

  it('never repeats a pin-value it refuses', () => {
    expect(() => parsePkcs11Uri('pkcs11:object=a?pin-value=s3cret-pin')).not.toThrow(/s3cret/);
  });
});

describe('pinSourceFrom', () => {
  const module = 'module-path=/usr/lib/softhsm/libsofthsm2.so';

  it('makes a relative pin-source absolute from the key file directory, percent-encoding what a query cannot hold', () => {
    expect(pinSourceFrom(`pkcs11:object=k?${module}&pin-source=file:pin.txt`, '/etc/jwt-grpc')).toBe(
      `pkcs11:object=k?${module}&pin-source=file:/etc/jwt-grpc/pin.txt`,
    );
    const odd = pinSourceFrom(`pkcs11:object=k?pin-source=file:../pins/a%26b.txt&${module}`, '/etc/jwt grpc/keys');
    expect(odd).toBe(`pkcs11:object=k?pin-source=file:/etc/jwt%20grpc/pins/a%26b.txt&${module}`);
    expect(parsePkcs11Uri(odd).pinSource).toBe('file:/etc/jwt grpc/pins/a&b.txt');
  });

  it('leaves an absolute pin-source, a URI without one, and a malformed URI as they are', () => {
    for (const uri of [
      `pkcs11:object=k?${module}&pin-source=file:/run/secrets/pin`,
      `pkcs11:object=k?${module}`,
      'pkcs11:object=k?pin-value=1234',
      'not a uri',
    ]) {
      expect(pinSourceFrom(uri, '/etc/jwt-grpc')).toBe(uri);
    }
  });
});

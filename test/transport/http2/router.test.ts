/**
 * The method table of the own HTTP/2 server: a service's methods added all or none, each
 * refusal an ERR_INVALID_OPTION naming the method, and the UNIMPLEMENTED message that tells
 * an unknown service from an unknown method.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../../src/base/errors.js';
import type { MethodDescriptor, ServiceDescriptor } from '../../../src/contracts/handler-api.js';
import { Router } from '../../../src/transport/http2/router.js';

function method(path: string, requestStream = false, responseStream = false): MethodDescriptor<unknown, unknown> {
  return {
    path,
    requestStream,
    responseStream,
    requestDeserialize: (bytes: Buffer) => bytes,
    requestSerialize: (value: unknown) => value as Buffer,
    responseSerialize: (value: unknown) => value as Buffer,
    responseDeserialize: (bytes: Buffer) => bytes,
  } as unknown as MethodDescriptor<unknown, unknown>;
}

const SERVICE: ServiceDescriptor = {
  Unary: method('/pkg.Svc/Unary'),
  Server: method('/pkg.Svc/Server', false, true),
  Client: method('/pkg.Svc/Client', true, false),
  Bidi: method('/pkg.Svc/Bidi', true, true),
};
const handler = (): void => {};
const IMPLEMENTATION = { Unary: handler, Server: handler, Client: handler, Bidi: handler };

function refusal(action: () => unknown): JwtGrpcError {
  try {
    action();
  } catch (err) {
    if (err instanceof JwtGrpcError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('Router', () => {
  it('routes each path to its handler with the kind of call its descriptor says', () => {
    const router = new Router();
    router.add(SERVICE, IMPLEMENTATION);
    expect(['Unary', 'Server', 'Client', 'Bidi'].map((name) => router.get(`/pkg.Svc/${name}`)?.kind)).toEqual([
      'unary',
      'server-stream',
      'client-stream',
      'bidi',
    ]);
    expect(router.get('/pkg.Svc/Unary')?.handler).toBe(handler);
    expect(router.get('/pkg.Svc/Other')).toBeUndefined();
    expect(router.get(undefined)).toBeUndefined();
  });

  const refused: [string, () => [unknown, unknown], string][] = [
    ['a definition that is not an object', () => [null, IMPLEMENTATION], 'addService: definition must be a service definition object'],
    ['an implementation that is not an object', () => [SERVICE, 'x'], 'addService: implementation must be an object of handlers'],
    [
      'a method without a valid path',
      () => [{ M: method('/no-method') }, { M: handler }],
      'addService: method M has no valid path ("/package.Service/Method")',
    ],
    [
      'a method without serializers',
      () => [{ M: { ...method('/p.S/M'), responseSerialize: undefined } }, { M: handler }],
      'addService: method /p.S/M lacks requestDeserialize or responseSerialize',
    ],
    [
      'a method without a handler',
      () => [{ M: method('/p.S/M') }, { M: 'not a function' }],
      'addService: no handler for /p.S/M (implementation.M)',
    ],
  ];
  for (const [what, args, message] of refused) {
    it(`refuses ${what} with ERR_INVALID_OPTION`, () => {
      const [definition, implementation] = args();
      const err = refusal(() => new Router().add(definition as ServiceDescriptor, implementation as typeof IMPLEMENTATION));
      expect([err.code, err.message, err.field]).toEqual(['ERR_INVALID_OPTION', message, 'implementation']);
    });
  }

  it('refuses a path served already, and adds none of the service then', () => {
    const router = new Router();
    router.add({ A: method('/p.S/A') }, { A: handler });
    const err = refusal(() => router.add({ B: method('/p.T/B'), A: method('/p.S/A') }, { A: handler, B: handler }));
    expect(err.message).toBe('addService: /p.S/A is already served');
    expect(router.get('/p.T/B')).toBeUndefined();
    expect(router.unknownPathMessage('/p.T/B')).toBe('unknown service p.T (method /p.T/B)');
  });

  it('says whether a path names an unknown service, an unknown method, or is malformed', () => {
    const router = new Router();
    router.add(SERVICE, IMPLEMENTATION);
    expect(router.unknownPathMessage('/pkg.Other/M')).toBe('unknown service pkg.Other (method /pkg.Other/M)');
    expect(router.unknownPathMessage('/pkg.Svc/Nope')).toBe('unknown method Nope of service pkg.Svc');
    expect(router.unknownPathMessage('/only')).toBe('malformed method path "/only"');
    expect(router.unknownPathMessage(undefined)).toBe('malformed method path ""');
  });
});

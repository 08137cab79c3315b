/**
 * createJwtServer's options resolved once: the three groups, and the refusals that keep a
 * server from starting in a way that would mislead (discovery without an issuer, a status list
 * without the port it is fetched from or a store that keeps its counter, two stores, channel
 * options on the own transport), each an ERR_INVALID_OPTION naming the option as the caller does.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import type { RevocationStore } from '../../src/contracts/revocation-store.js';
import { type JwtServerOptions, SERVER_OPTION_NAMES, resolveServerOptions } from '../../src/server/options.js';

function refusal(options: unknown, label?: (name: string) => string): JwtGrpcError {
  try {
    resolveServerOptions(options as JwtServerOptions, { label });
  } catch (err) {
    if (err instanceof JwtGrpcError) return err;
    throw err;
  }
  throw new Error('not refused');
}

const store = (reserve: boolean): RevocationStore => ({
  kind: 'own',
  up: true,
  start: async () => {},
  add: async () => {},
  close: async () => {},
  ...(reserve && { reserveStatusIndexes: async () => 0 }),
});

describe('resolveServerOptions', () => {
  it('resolves the service, transport and server groups with their defaults', () => {
    const resolved = resolveServerOptions({});
    expect(resolved.transport).toMatchObject({ transport: 'http2', maxReceiveMessageBytes: 65_536 });
    expect(resolved.server).toMatchObject({ health: true, reflection: true, statusList: false });
    expect(resolved.service).toBeDefined();
    expect(SERVER_OPTION_NAMES).toEqual(expect.arrayContaining(['keys', 'transport', 'health', 'issuer']));
  });

  it('takes a status list with the discovery port and a store that keeps its counter', () => {
    const issuer = 'https://auth.example';
    expect(resolveServerOptions({ issuer, httpPort: 0, statusList: true, revocations: 'r.jsonl' }).server.statusList).toBe(true);
    expect(resolveServerOptions({ issuer, httpPort: 0, statusList: true, revocationStore: 'redis://h' }).server.statusList).toBe(true);
    expect(resolveServerOptions({ issuer, httpPort: 0, statusList: true, revocationStore: store(true) }).server.statusList).toBe(true);
  });

  it('refuses options that are not an object', () => {
    expect(refusal(null).message).toBe('option options: must be an object');
  });

  it('refuses channelOptions on the own transport', () => {
    const err = refusal({ channelOptions: { 'grpc.keepalive_time_ms': 1 } });
    expect([err.code, err.field, err.message]).toEqual([
      'ERR_INVALID_OPTION',
      'channelOptions',
      "option channelOptions: applies to transport 'grpc-js' only; this server runs on 'http2'",
    ]);
  });

  it('refuses discovery without an http(s) issuer', () => {
    expect(refusal({ httpPort: 0 }).field).toBe('issuer');
    expect(refusal({ httpPort: 0, issuer: 'auth.example' }).field).toBe('issuer');
  });

  it('refuses a status list without the discovery port', () => {
    const err = refusal({ statusList: true, revocations: 'r.jsonl' });
    expect([err.field, err.message]).toEqual([
      'statusList',
      'option statusList: needs httpPort: verifiers fetch the status lists over HTTP at ISSUER/statuslists/N',
    ]);
  });

  it('refuses a status list without a store that keeps its index counter', () => {
    for (const options of [{}, { revocationStore: store(false) }]) {
      const err = refusal({ issuer: 'https://auth.example', httpPort: 0, statusList: true, ...options });
      expect(err.field).toBe('statusList');
      expect(err.message).toMatch(
        /^option statusList: needs revocations or revocationStore: a store that keeps the status list's index counter/,
      );
    }
  });

  it('refuses two stores', () => {
    expect(refusal({ revocations: 'r.jsonl', revocationStore: 'redis://h' }).message).toBe(
      'option revocations/revocationStore: give one store, not both',
    );
  });

  it('names options as the caller labels them', () => {
    const err = refusal({ statusList: true }, (name) => `server.${name}`);
    expect(err.message).toBe(
      'option server.statusList: needs server.httpPort: verifiers fetch the status lists over HTTP at ISSUER/statuslists/N',
    );
  });
});

/**
 * The warning that an admin secret crosses the network in the clear: loopback hosts in every
 * spelling stay quiet, any other host gets one line naming the address and the remedies.
 */
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, warnAdminSecretOnPlaintext } from '../../src/server/plaintext-admin.js';

function warnings(host: string, port = 50051): string[] {
  const lines: string[] = [];
  warnAdminSecretOnPlaintext({ info: () => {}, warn: (m) => void lines.push(m), error: () => {} }, host, port);
  return lines;
}

describe('isLoopbackHost', () => {
  it('knows loopback in every spelling', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      '[::ffff:127.0.0.2]',
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('does not take any other host for loopback', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'localhost.example', '127.example.org', '::ffff:10.0.0.1', '::2', '']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('warnAdminSecretOnPlaintext', () => {
  it('says nothing on loopback', () => {
    expect(warnings('127.0.0.1')).toEqual([]);
    expect(warnings('[::1]')).toEqual([]);
  });

  it('warns once on another host, naming the address and the remedies', () => {
    const [line, ...rest] = warnings('0.0.0.0', 50051);
    expect(rest).toEqual([]);
    expect(line).toBe(
      '--admin-token-file (adminTokenFile) on a plaintext port (0.0.0.0:50051, no TLS): the admin secret crosses the network readable by anyone on the path; ' +
        'serve TLS with --tls-cert/--tls-key (the tls of listen), or bind --host to loopback (docs/revocation.md)',
    );
  });

  it('brackets a bare IPv6 host, and keeps brackets given', () => {
    expect(warnings('::', 9)[0]).toContain('([::]:9, no TLS)');
    expect(warnings('[2001:db8::1]', 9)[0]).toContain('([2001:db8::1]:9, no TLS)');
  });
});

/**
 * The shipped deploy/nginx/jwt-grpc.conf as the harness runs it (bench/harness/nginx.ts):
 * only its replica lines and listen ports replaced, its discovery part kept with the
 * replicas' discovery ports or cut out whole (the benchmark's replicas serve none), and a
 * shipped file that lost the shape this relies on refused rather than run half-replaced.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { killAll } from '../../bench/kit/launcher.js';
import { NGINX_INSTALL, SHIPPED_NGINX_CONF, findNginx, nginxConfigFor, startNginx } from '../../bench/harness/nginx.js';

const shipped = readFileSync(SHIPPED_NGINX_CONF, 'utf8');
/** The `server` addresses of the upstream named `upstream`. */
function replicaLines(config: string, upstream: string): string[] {
  const block = new RegExp(`upstream ${upstream} \\{([^}]*)\\}`).exec(config)?.[1] ?? '';
  return [...block.matchAll(/^\s*server (\S+)/gm)].map((line) => line[1] ?? '');
}

describe('the shipped nginx configuration, ports placed', () => {
  afterAll(killAll);

  it('with discovery: each upstream lists its own replicas, each server block listens where told', () => {
    const config = nginxConfigFor(shipped, [7001, 7002], 7000, { upstreamPorts: [8001, 8002], listenPort: 8000 });
    expect(replicaLines(config, 'jwt_grpc')).toEqual(['127.0.0.1:7001', '127.0.0.1:7002']);
    expect(replicaLines(config, 'jwt_grpc_http')).toEqual(['127.0.0.1:8001', '127.0.0.1:8002']);
    expect(config).toContain('listen 127.0.0.1:7000 http2;');
    expect(config).toContain('listen 127.0.0.1:8000;');
    // Everything else as shipped: the same lines but for the ports.
    const ports = (text: string): string => text.replace(/^\s*server 127\.0\.0\.1:\d+.*\n/gm, '').replace(/127\.0\.0\.1:\d+/g, 'ADDR');
    expect(ports(config)).toBe(ports(shipped));
  });

  it('without discovery: the discovery part is cut out whole, the gRPC part as with it', () => {
    const config = nginxConfigFor(shipped, [7001], 7000);
    expect(config).not.toContain('jwt_grpc_http');
    expect(config).not.toMatch(/listen 127\.0\.0\.1:\d+;/);
    expect(nginxConfigFor(shipped, [7001], 7000, { upstreamPorts: [8001], listenPort: 8000 }).startsWith(config)).toBe(true);
  });

  it('refuses a shipped file whose shape it does not know', () => {
    expect(() => nginxConfigFor(shipped.replace('# OpenID discovery and the JWK Set', '# discovery'), [7001], 7000)).toThrow(
      /discovery part/,
    );
    expect(() =>
      nginxConfigFor(shipped.replace(/listen 127\.0\.0\.1:\d+;/, 'listen 8080;'), [7001], 7000, {
        upstreamPorts: [8001],
        listenPort: 8000,
      }),
    ).toThrow(/discovery upstream/);
  });

  it.skipIf(findNginx() === null)(
    `nginx starts with the gRPC part alone (the benchmark's row)${findNginx() === null ? ` (skipped: nginx not found, \`${NGINX_INSTALL}\`)` : ''}`,
    async () => {
      const proxy = await startNginx([1]);
      try {
        expect(proxy.config).not.toContain('jwt_grpc_http');
      } finally {
        await proxy.stop();
        proxy.removeFiles();
      }
    },
  );
});

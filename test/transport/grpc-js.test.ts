/**
 * The handler API on a grpc-js Server (addServiceToGrpcJs): every method needs a handler, a
 * deserializer's GrpcStatusError is the call's status (grpc-js alone answers INTERNAL),
 * a handler's status and trailers reach the client, gRPC's reserved headers never reach the
 * handler's metadata, and interceptors see each call. Both transports' full behaviour is
 * compared in calls.test.ts and protocol.test.ts.
 */
import { Metadata, Server, type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { unary } from '../../bench/kit/grpc-clients.js';
import { JwtGrpcError } from '../../src/base/errors.js';
import { silentLogger } from '../../src/base/log.js';
import { addServiceToGrpcJs } from '../../src/transport/grpc-js.js';
import { type CallContext, type CallOutcome, CallMetadata, GrpcStatus, GrpcStatusError } from '../../src/contracts/handler-api.js';
import { PROBE, probeClient } from './helpers/probe.js';
import { closeAllServers, startGrpcJs } from './helpers/servers.js';

afterAll(closeAllServers);

const unused = (): never => {
  throw new Error('not called');
};

describe('addServiceToGrpcJs', () => {
  it('refuses an implementation without a handler for a method, naming it', () => {
    let refused: unknown;
    try {
      addServiceToGrpcJs(new Server(), PROBE, { Unary: unused, ServerStream: unused, ClientStream: unused });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(JwtGrpcError);
    expect([(refused as JwtGrpcError).code, (refused as JwtGrpcError).field, (refused as JwtGrpcError).message]).toEqual([
      'ERR_INVALID_OPTION',
      'implementation',
      'addServiceToGrpcJs: no handler for /test.Probe/Bidi (implementation.Bidi)',
    ]);
  });

  it('refuses interceptors that are not a list of hooks', () => {
    expect(() =>
      addServiceToGrpcJs(
        new Server(),
        PROBE,
        { Unary: unused, ServerStream: unused, ClientStream: unused, Bidi: unused },
        { interceptors: [() => {}] as never },
      ),
    ).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'interceptors' }));
  });

  it("serves a call: the handler's answer, its status and trailers, metadata without gRPC's reserved headers", async () => {
    const outcomes: CallOutcome[] = [];
    let seen: string[] = [];
    const { port } = await startGrpcJs(
      [
        [
          PROBE,
          {
            Unary: (request: { fail?: boolean }, call: CallContext) => {
              seen = [...call.metadata.entries()].map(([key]) => key);
              if (request.fail)
                throw new GrpcStatusError(GrpcStatus.PERMISSION_DENIED, 'not yours', {
                  metadata: new CallMetadata().set('x-why', 'policy'),
                });
              call.setTrailers(new CallMetadata().set('x-served-by', 'test'));
              return { ok: true };
            },
            ServerStream: unused,
            ClientStream: unused,
            Bidi: unused,
          },
        ],
      ],
      { logger: silentLogger, interceptors: [{ onCallEnd: (_call, outcome) => void outcomes.push(outcome) }] },
    );
    const client = probeClient(port);
    try {
      const metadata = new Metadata();
      metadata.set('x-tenant', 'a');
      expect(await unary(client, 'Unary', {}, 5000, metadata)).toEqual({ ok: true });
      expect(seen).toContain('x-tenant');
      expect(seen.filter((key) => key.startsWith('grpc-') || key === 'content-type' || key === 'te')).toEqual([]);
      const err = (await unary(client, 'Unary', { fail: true }).catch((e: unknown) => e)) as ServiceError;
      expect([err.code, err.details, err.metadata.get('x-why')]).toEqual([status.PERMISSION_DENIED, 'not yours', ['policy']]);
      expect(outcomes.map((o) => o.status)).toEqual([GrpcStatus.OK, GrpcStatus.PERMISSION_DENIED]);
    } finally {
      client.close();
    }
  });

  it("answers a request that does not deserialize with the deserializer's INVALID_ARGUMENT, never running the handler", async () => {
    let ran = false;
    const { port } = await startGrpcJs(
      [[PROBE, { Unary: () => ((ran = true), {}), ServerStream: unused, ClientStream: unused, Bidi: unused }]],
      { logger: silentLogger },
    );
    const client = probeClient(port);
    try {
      // A string the client serializes without JSON: not JSON on the server.
      const raw = client as unknown as { makeUnaryRequest: (...args: unknown[]) => unknown };
      const err = await new Promise<ServiceError>((resolve) => {
        raw.makeUnaryRequest(
          '/test.Probe/Unary',
          () => Buffer.from('{not json'),
          (bytes: Buffer) => bytes,
          null,
          new Metadata(),
          { deadline: Date.now() + 5000 },
          (e: ServiceError) => resolve(e),
        );
      });
      expect([err.code, err.details]).toEqual([status.INVALID_ARGUMENT, 'request is not JSON (9 bytes)']);
      expect(ran).toBe(false);
    } finally {
      client.close();
    }
  });
});

/**
 * What the grpc-js transport is given from the resolved options: the channel options (the
 * same limits and connection age as the own transport, channelz off, the user's channel
 * options last), the HTTP/2 reset limits applied to grpc-js's server options, and its memory limits.
 */
import { describe, expect, it } from 'vitest';
import {
  HTTP2_SERVER_OPTIONS,
  applyHttp2ServerOptions,
  grpcJsMemoryLimits,
  serverChannelOptions,
} from '../../src/server/channel-options.js';
import { resolveServerOptions } from '../../src/server/options.js';
import { STREAM_RESET_BURST, STREAM_RESET_RATE } from '../../src/transport/http2/defaults.js';
import type { Server } from '@grpc/grpc-js';

const transport = (options: Parameters<typeof resolveServerOptions>[0] = {}) =>
  resolveServerOptions({ transport: 'grpc-js', ...options }).transport;

describe('serverChannelOptions', () => {
  it('sets the receive limit, turns channelz off, bounds session memory and concurrent streams, and ages connections by default', () => {
    expect(serverChannelOptions(transport())).toEqual({
      'grpc.max_receive_message_length': 65_536,
      'grpc.enable_channelz': 0,
      'grpc-node.max_session_memory': 64,
      'grpc.max_connection_age_ms': 1_800_000,
      'grpc.max_connection_age_grace_ms': 30_000,
      'grpc.max_concurrent_streams': 1024,
    });
  });

  it('adds the connection age with the grace of the option table', () => {
    expect(serverChannelOptions(transport({ maxConnectionAgeMs: 60_000, maxReceiveMessageBytes: 2048 }))).toMatchObject({
      'grpc.max_receive_message_length': 2048,
      'grpc.max_connection_age_ms': 60_000,
      'grpc.max_connection_age_grace_ms': 30_000,
    });
  });

  it('gives grpc-js the grace the options give', () => {
    expect(serverChannelOptions(transport({ maxConnectionAgeGraceMs: 5000 }))).toMatchObject({ 'grpc.max_connection_age_grace_ms': 5000 });
  });

  it("lets the user's channel options have the last word", () => {
    expect(
      serverChannelOptions(transport({ channelOptions: { 'grpc.enable_channelz': 1, 'grpc.keepalive_time_ms': 5000 } })),
    ).toMatchObject({
      'grpc.enable_channelz': 1,
      'grpc.keepalive_time_ms': 5000,
    });
  });
});

describe('applyHttp2ServerOptions', () => {
  it("raises the stream reset limits in grpc-js's HTTP/2 server options", () => {
    const server = { commonServerOptions: { other: true } };
    expect(applyHttp2ServerOptions(server as unknown as Server)).toBe(true);
    expect(server.commonServerOptions).toEqual({ other: true, streamResetBurst: STREAM_RESET_BURST, streamResetRate: STREAM_RESET_RATE });
    expect(HTTP2_SERVER_OPTIONS).toEqual({ streamResetBurst: STREAM_RESET_BURST, streamResetRate: STREAM_RESET_RATE });
  });

  it('says false on a grpc-js without those options', () => {
    expect(applyHttp2ServerOptions({} as unknown as Server)).toBe(false);
    expect(applyHttp2ServerOptions({ commonServerOptions: null } as unknown as Server)).toBe(false);
  });
});

describe('grpcJsMemoryLimits', () => {
  it("gives the per-connection and process ceilings in bytes, a client address's share of the latter, and the stall bound", () => {
    expect(grpcJsMemoryLimits(transport({ maxProcessStreamMemoryMb: 8, maxFlowControlStallMs: 500 }))).toEqual({
      maxConnectionBytes: 64 * 1024 * 1024,
      maxProcessBytes: 8 * 1024 * 1024,
      maxPeerBytes: 2 * 1024 * 1024,
      maxStallMs: 500,
    });
    expect(grpcJsMemoryLimits(transport({ peerSharePercent: 100 })).maxPeerBytes, 'no share').toBe(Number.POSITIVE_INFINITY);
  });
});

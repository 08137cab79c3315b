import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVERS, type ServerSpec, withUnbundledCli } from '../../bench/macro/servers.js';
import { repoPath } from '../../bench/kit/paths.js';
import { type CpuProfile, categoryOf, formatProfileSummary, stageOf, summarizeProfile } from '../../bench/profile/summarize.js';

const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 9 } });

describe('categoryOf', () => {
  it.each([
    ['(idle)', '', 'idle'],
    ['(garbage collector)', '', 'GC'],
    ['(program)', '', 'V8 and native (program)'],
    ['writeBuffer', '', 'native builtins'],
    ['handleUnary', 'file:///w/node_modules/@grpc/grpc-js/build/src/server.js', '@grpc/grpc-js'],
    ['startSpan', 'file:///w/node_modules/@opentelemetry/sdk-trace-base/build/src/Tracer.js', 'OpenTelemetry (API, SDK, exporter)'],
    ['decode', 'file:///w/node_modules/protobufjs/src/reader.js', 'protobufjs (proto-loader)'],
    ['signOneShot', 'node:internal/crypto/sig', 'node:crypto'],
    ['respond', 'node:internal/http2/core', 'node:http2'],
    ['emit', 'node:events', 'node (other)'],
    ['sign', 'file:///w/jwt-grpc/dist/src/tokens/sign.js', 'this repository'],
    ['x', 'file:///w/node_modules/fast-jwt/src/signer.js', 'other'],
  ])('%s in %s is %s', (name, url, category) => {
    expect(categoryOf(name, url)).toBe(category);
  });
});

describe('stageOf: the ES256 budget of a GenerateJwt', () => {
  const dist = 'file:///w/jwt-grpc/dist/src';
  it.each([
    ['signOneShot', 'node:internal/crypto/sig', 'sign (node:crypto, OpenSSL)'],
    ['verifyOneShot', 'node:internal/crypto/sig', 'verify (node:crypto, OpenSSL)'],
    ['preparePrivateKey', 'node:internal/crypto/keys', 'key objects (node:crypto argument handling)'],
    ['joseToDer', `${dist}/algorithms/ecdsa.js`, 'ECDSA closures, DER <-> JOSE'],
    ['begin', `${dist}/tokens/sign.js`, 'signer, claims, service'],
    ['checkClaimTypes', `${dist}/tokens/claims.js`, 'signer, claims, service'],
    ['generate', `${dist}/jwt-service/core.js`, 'signer, claims, service'],
    ['verifySignedParts', `${dist}/tokens/verify.js`, 'self-check verifier (tokens/verify)'],
    ['base64urlSlice', '', 'buffers, base64url, UTF-8'],
    ['FastBuffer', 'node:internal/buffer', 'buffers, base64url, UTF-8'],
    ['concat', 'node:buffer', 'buffers, base64url, UTF-8'],
    ['encodeGenerateJwtResponse', `${dist}/jwt-service/codec/encode.js`, 'protobuf codec'],
    ['#headerBlockDone', `${dist}/transport/http2/wire/connection.js`, 'transport (own HTTP/2, sockets, event loop)'],
    ['writeBuffer', '', 'transport (own HTTP/2, sockets, event loop)'],
    ['processTicksAndRejections', 'node:internal/process/task_queues', 'transport (own HTTP/2, sockets, event loop)'],
    ['(garbage collector)', '', 'GC'],
    ['compileSourceTextModule', 'node:internal/modules/esm/utils', 'start-up and exit'],
    ['fileURLToPath', 'node:internal/url', 'start-up and exit'],
    ['getCLIOptionsFromBinding', 'node:internal/options', 'start-up and exit'],
    ['', '', 'other (V8 builtins, unattributed)'],
  ])('%s in %s is %s', (name, url, stage) => {
    expect(stageOf(name, url)).toBe(stage);
  });

  it('formats the stages as shares of the busy samples and of the measured CPU per call, start-up and idle left out', () => {
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(idle)', ''),
        frame(2, 'signOneShot', 'node:internal/crypto/sig'),
        frame(3, 'verifyOneShot', 'node:internal/crypto/sig'),
        frame(4, 'ModuleWrap', ''),
      ],
      samples: [1, 2, 3, 3, 3, 4],
      timeDeltas: [500, 100, 100, 100, 100, 900],
    };
    const text = formatProfileSummary(summarizeProfile(profile), 10, 80);
    expect(text).toMatch(/75\.0 %\s+60\.0 us\/call\s+verify \(node:crypto, OpenSSL\)/);
    expect(text).toMatch(/25\.0 %\s+20\.0 us\/call\s+sign \(node:crypto, OpenSSL\)/);
    expect(text).not.toMatch(/%\s+\S+ us\/call\s+start-up and exit/);
  });
});

describe('the profiled server', () => {
  // The bundled executable's frames name its chunks, which stageOf cannot place: every stage
  // of ours read "other" until the profile ran the unbundled modules.
  it('is the CLI as tsc wrote it, one module per source file, with the same arguments', () => {
    const ours = SERVERS.find((s) => s.name === 'jwt-grpc') as ServerSpec;
    const launch = ours.launch({ keysFile: 'k.json', subjectsFile: 's.json', workers: 1 });
    const args = withUnbundledCli(launch.args);
    expect(launch.args).toContain(repoPath('dist', 'src', 'bin', 'jwt-grpc.js'));
    expect(args).toEqual(launch.args.map((a) => (a.endsWith('jwt-grpc.js') ? repoPath('dist', 'src', 'cli', 'main.js') : a)));
    expect(existsSync(repoPath('src', 'cli', 'main.ts'))).toBe(true);
    expect(stageOf('#headerBlockDone', `file://${repoPath('dist', 'src', 'transport', 'http2', 'wire', 'connection.js')}`)).toBe(
      'transport (own HTTP/2, sockets, event loop)',
    );
  });
});

describe('summarizeProfile', () => {
  // 4 samples: 300 us idle, 500 us in sign (twice), 200 us GC.
  const profile: CpuProfile = {
    nodes: [frame(1, '(idle)', ''), frame(2, 'sign', 'file:///w/jwt-grpc/dist/src/tokens/sign.js'), frame(3, '(garbage collector)', '')],
    samples: [1, 2, 3, 2],
    timeDeltas: [300, 250, 200, 250],
  };

  it('sums self time by category and function, with the busy share', () => {
    const summary = summarizeProfile(profile);
    expect(summary.totalUs).toBe(1000);
    expect(summary.busyShare).toBeCloseTo(0.7);
    expect(summary.categories).toEqual([
      { name: 'this repository', us: 500, share: 0.5 },
      { name: 'idle', us: 300, share: 0.3 },
      { name: 'GC', us: 200, share: 0.2 },
    ]);
    expect(summary.functions[0]).toEqual({ name: 'sign dist/src/tokens/sign.js:10', us: 500, share: 0.5 });
  });

  it('formats per-call figures when the number of calls is known', () => {
    const text = formatProfileSummary(summarizeProfile(profile), 10);
    expect(text).toContain('main thread busy 70 %, 10 calls');
    expect(text).toMatch(/50\.0 %\s+50\.0 us\/call\s+this repository/);
  });
});

import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planCores } from '../../bench/harness/cores.js';
import { NODE_CRYPTO_CHILD, parseNodeCryptoLine, signingInputOfTokenSize } from '../../bench/harness/node-crypto-floor.js';
import { OpensslFloorProbe, type OpensslFloor, parseOpensslSpeed } from '../../bench/harness/openssl-floor.js';
import { FLOOR_TARGET, floorRatios, floorSection, nodeCryptoFloor } from '../../bench/macro/floor-section.js';
import { runCommand } from '../../bench/kit/exec.js';
import type { MacroResults, ServerStatus } from '../../bench/macro/results.js';
import { buildScenarios } from '../../bench/macro/scenarios.js';
import { cell } from './round-fixture.js';

/** `openssl speed -mr -seconds 1 ecdsap256` of OpenSSL 3.0.19, as it printed on the development VM. */
const MACHINE_READABLE = [
  '+DTP:256:sign:ecdsa:1',
  '+R5:14079:256:0.29',
  '+DTP:256:verify:ecdsa:1',
  '+R6:5241:256:0.34',
  '+F4:3:256:48548.275862:15414.705882',
  '',
].join('\n');
/** The same without `-mr`: the human table. */
const TABLE = [
  'version: 3.0.19',
  '                              sign    verify    sign/s verify/s',
  ' 256 bits ecdsa (nistp256)   0.0000s   0.0001s  49928.1  16408.8',
  '',
].join('\n');

describe('parseOpensslSpeed', () => {
  it('reads the machine-readable line', () => {
    expect(parseOpensslSpeed(MACHINE_READABLE)).toEqual({ signPerS: 48548.275862, verifyPerS: 15414.705882 });
  });

  it('reads the human table', () => {
    expect(parseOpensslSpeed(TABLE)).toEqual({ signPerS: 49928.1, verifyPerS: 16408.8 });
  });

  it('refuses output without P-256 figures: another curve, an error, zero rates', () => {
    expect(parseOpensslSpeed('')).toBeNull();
    expect(parseOpensslSpeed('speed: Unknown algorithm ecdsap256\n')).toBeNull();
    expect(parseOpensslSpeed('+F4:4:384:1000.0:300.0\n')).toBeNull();
    expect(parseOpensslSpeed(' 384 bits ecdsa (nistp384)   0.0001s   0.0003s  1000.0  300.0\n')).toBeNull();
    expect(parseOpensslSpeed('+F4:3:256:0.000000:15414.7\n')).toBeNull();
  });
});

describe('parseNodeCryptoLine', () => {
  it("reads the child's line, and refuses anything else", () => {
    expect(parseNodeCryptoLine('node-crypto sign 24.100 verify 63.250\n')).toEqual({ signUs: 24.1, verifyUs: 63.25 });
    expect(parseNodeCryptoLine('')).toBeNull();
    expect(parseNodeCryptoLine('node-crypto sign 0.000 verify 63.250\n')).toBeNull();
    expect(parseNodeCryptoLine('node-crypto sign 24.1\n')).toBeNull();
  });

  it("signs an input of a real token's size: three SHA-256 blocks, as jwt-grpc's ES256 tokens", () => {
    const bytes = Buffer.byteLength(signingInputOfTokenSize());
    expect(bytes).toBeGreaterThan(119);
    expect(bytes).toBeLessThanOrEqual(183);
  });
});

describe('OpensslFloorProbe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-floor-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const plan = planCores(1, [0, 1], false);
  /** A stand-in `openssl` printing `stdout` and exiting `status`. */
  const fakeOpenssl = (name: string, stdout: string, status = 0): string => {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\ncat <<'OUT'\n${stdout}\nOUT\nexit ${status}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  /** A stand-in node-crypto-child.js: prints `line`, exits `status`. */
  const fakeNodeChild = (name: string, line: string, status = 0): string => {
    const path = join(dir, `${name}.mjs`);
    writeFileSync(path, `process.stdout.write(${JSON.stringify(line)});\nprocess.exit(${status});\n`);
    return path;
  };

  it('turns each reading into CPU µs per operation, and the floor into their median sign + verify', () => {
    const child = fakeNodeChild('node-ok', 'node-crypto sign 25.000 verify 70.000\n');
    const probe = new OpensslFloorProbe(plan, [0], performance.now(), 1, fakeOpenssl('ok', MACHINE_READABLE), child);
    probe.measure();
    probe.measure({ scenario: 'single-es256-1x50', round: 3 });
    const floor = probe.result();
    expect(floor.skipped).toBeNull();
    expect(floor.readings).toHaveLength(2);
    expect(floor.readings.map((r) => r.round)).toEqual([undefined, { scenario: 'single-es256-1x50', round: 3 }]);
    expect(floor.readings[0]?.signUs).toBeCloseTo(1e6 / 48548.275862, 6);
    expect(floor.readings[0]?.verifyUs).toBeCloseTo(1e6 / 15414.705882, 6);
    expect(floor.callUs).toBeCloseTo(1e6 / 48548.275862 + 1e6 / 15414.705882, 6);
    expect(floor.command).toBe('openssl speed -mr -seconds 1 ecdsap256');
    expect(floor.readings.map((r) => r.node)).toEqual([
      { signUs: 25, verifyUs: 70 },
      { signUs: 25, verifyUs: 70 },
    ]);
    expect(floor.nodeSkipped).toBeNull();
    expect(floor.nodeCommand).toBe('node dist/bench/harness/node-crypto-child.js 1');
  });

  it("keeps the OpenSSL reading where node:crypto's loop fails, and says why it has no figures", () => {
    for (const [child, reason] of [
      [fakeNodeChild('node-fails', '', 3), 'exit status 3'],
      [fakeNodeChild('node-silent', 'nothing\n'), 'no figures in its output'],
      [join(dir, 'missing.js'), 'does not exist: run `npm run build` first'],
    ] as const) {
      const probe = new OpensslFloorProbe(plan, [0], performance.now(), 1, fakeOpenssl('ok2', MACHINE_READABLE), child);
      probe.measure();
      const floor = probe.result();
      expect(floor.skipped).toBeNull();
      expect(floor.readings).toHaveLength(1);
      expect(floor.readings[0]?.node).toBeUndefined();
      expect(floor.nodeSkipped).toContain(reason);
    }
  });

  it('without openssl, skips with the reason named', () => {
    const probe = new OpensslFloorProbe(plan, [0], performance.now(), 1, null);
    probe.measure();
    expect(probe.result()).toMatchObject({ skipped: expect.stringContaining('openssl not found'), readings: [] });
    expect(Number.isNaN(probe.result().callUs)).toBe(true);
  });

  it('an openssl that fails or prints no P-256 line skips, saying so, rather than giving a floor', () => {
    for (const [name, out, status] of [
      ['fails', '', 1],
      ['other', TABLE.replace('256 bits', '384 bits'), 0],
    ] as const) {
      const probe = new OpensslFloorProbe(plan, [0], performance.now(), 1, fakeOpenssl(name, out, status));
      probe.measure();
      expect(probe.result().skipped).toContain('gave no P-256 figures');
    }
  });
});

describe('floorRatios and the summary section', () => {
  const status = (name: string, role: ServerStatus['role']): ServerStatus => ({
    name,
    label: name,
    role,
    stack: role === 'go' ? 'grpc-go' : 'own HTTP/2',
    description: '',
    cluster: false,
    usesAllCores: false,
    skipped: null,
  });
  const scenarios = buildScenarios(['HS256', 'ES256'], [{ cores: 1, workers: 2 }]).filter(
    (s) => s.group === 'single' && s.method === 'GenerateJwt',
  );
  const floor: OpensslFloor = {
    command: 'openssl speed',
    version: 'OpenSSL 3.0.19',
    readings: [{ signUs: 20, verifyUs: 60, atMs: 0 }],
    callUs: 80,
    skipped: null,
    nodeCommand: 'node dist/bench/harness/node-crypto-child.js 1',
    nodeSkipped: null,
  };
  const results = {
    scenarios,
    servers: [status('jwt-grpc', 'ours'), status('go', 'go')],
    cells: [
      cell('jwt-grpc', 'single-es256-1x50', [
        { rps: 1, cpuUs: 100 },
        { rps: 1, cpuUs: 104 },
        { rps: 1, cpuUs: 96 },
      ]),
      cell('go', 'single-es256-1x50', [{ rps: 1, cpuUs: 120 }]),
      cell('jwt-grpc', 'single-hs256-1x50', [{ rps: 1, cpuUs: 20 }]),
    ],
    opensslFloor: floor,
  } as unknown as MacroResults;

  it("divides each ES256 cell's CPU per call by the floor; HS256 cells have none", () => {
    const [ours, go] = floorRatios(results, floor);
    expect(floorRatios(results, floor)).toHaveLength(2);
    expect(ours).toMatchObject({
      scenario: 'single-es256-1x50',
      server: 'jwt-grpc',
      role: 'ours',
      cpuUs: { median: 100, min: 96, max: 104 },
    });
    expect(ours?.ratio).toMatchObject({ median: 1.25, low: null, high: null, n: 3 });
    expect(go).toMatchObject({ server: 'go', role: 'go', cpuUs: { median: 120, min: 120, max: 120 }, ratio: { median: 1.5, n: 1 } });
  });

  it('divides each round by the floor read before that round: a VM that slowed a round slowed both, and the ratio holds', () => {
    // Five rounds, the machine 20 % slower in rounds 2 and 4: the server's CPU per call and
    // the floor read before those rounds rise together. Round 5 has no reading of its own: the run's floor.
    const perRound = [80, 96, 80, 96].map((callUs, i) => ({
      signUs: callUs / 4,
      verifyUs: (3 * callUs) / 4,
      atMs: i,
      round: { scenario: 'single-es256-1x50', round: i + 1 },
    }));
    const drifting: OpensslFloor = { ...floor, readings: [...floor.readings, ...perRound], callUs: 80 };
    const slowed = {
      ...results,
      cells: [
        cell(
          'jwt-grpc',
          'single-es256-1x50',
          [100, 120, 100, 120, 100].map((cpuUs) => ({ rps: 1, cpuUs })),
        ),
      ],
      opensslFloor: drifting,
    } as unknown as MacroResults;
    const [ours] = floorRatios(slowed, drifting);
    expect(ours?.ratio.median).toBeCloseTo(1.25, 9);
    expect(ours?.ratio.low).toBeCloseTo(1.25, 9);
    expect(ours?.ratio.high).toBeCloseTo(1.25, 9);
    // Against one floor for the whole run the slow rounds read 1.50x.
    expect(floorSection(slowed)).toContain(
      '| **jwt-grpc** | single-es256-1x50 | 100.0 (100.0-120.0) | 1.25x (1.25x-1.25x) | - | met (≤ 1.3x) |',
    );
    expect(floorSection(slowed)).toContain('the median of 5 reading(s) (4 of them before a round of an ES256 cell');
  });

  it('leaves out a cell whose CPU could not be read in any round, rather than failing the summary', () => {
    const unread = cell('jwt-grpc', 'single-es256-1x50', [{ rps: 1, cpuUs: 100 }]);
    const blind = {
      ...results,
      cells: [{ ...unread, rounds: unread.rounds.map((r) => ({ ...r, serverCpuUsPerRequest: Number.NaN })) }],
    } as unknown as MacroResults;
    expect(floorRatios(blind, floor)).toEqual([]);
    expect(floorSection(blind)).toContain('No ES256 GenerateJwt cell on one server core was measured.');
  });

  it('says whether ours met the target, and why a skipped floor gives no ratio', () => {
    const text = floorSection(results) ?? '';
    expect(text).toContain(
      `| **jwt-grpc** | single-es256-1x50 | 100.0 (96.0-104.0) | 1.25x (3 rounds: no interval) | - | met (≤ ${FLOOR_TARGET}x) |`,
    );
    expect(text).toContain('| go | single-es256-1x50 | 120.0 (120.0-120.0) | 1.50x (1 round: no interval) | - |');
    const skipped = { ...results, opensslFloor: { ...floor, skipped: 'openssl not found on PATH' } } as MacroResults;
    expect(floorSection(skipped)).toContain('Not measured: openssl not found on PATH');
    expect(floorRatios(skipped, { ...floor, skipped: 'x' })).toEqual([]);
    expect(floorSection({ ...results, opensslFloor: undefined } as unknown as MacroResults)).toBeNull();
  });

  it('without node:crypto readings, says so and leaves the column empty', () => {
    const text =
      floorSection({
        ...results,
        opensslFloor: { ...floor, nodeSkipped: "node:crypto's loop gave no figures (exit status 3)" },
      } as MacroResults) ?? '';
    expect(text).toContain("node:crypto alone: not measured (node:crypto's loop gave no figures (exit status 3)).");
    expect(text).toContain('| **jwt-grpc** | single-es256-1x50 | 100.0 (96.0-104.0) | 1.25x (3 rounds: no interval) | - |');
    expect(nodeCryptoFloor(floor)).toBeNull();
  });

  it("splits the distance to the floor: node:crypto's own ratio, and each server's CPU per call over node:crypto's reading of its round", () => {
    // node:crypto reads 1.10x the floor; ours costs 1.25x the floor, so 1.25 / 1.10 of node:crypto.
    const perRound = [1, 2, 3].map((round) => ({
      signUs: 20,
      verifyUs: 60,
      atMs: round,
      round: { scenario: 'single-es256-1x50', round },
      node: { signUs: 24, verifyUs: 64 },
    }));
    const withNode: OpensslFloor = {
      ...floor,
      readings: [{ ...floor.readings[0], node: { signUs: 22, verifyUs: 66 } } as OpensslFloor['readings'][number], ...perRound],
    };
    const split = { ...results, opensslFloor: withNode } as MacroResults;
    expect(nodeCryptoFloor(withNode)).toMatchObject({ callUs: { median: 88, min: 88, max: 88 }, ratio: { median: 1.1, n: 4 } });
    const [ours] = floorRatios(split, withNode);
    expect(ours?.overNode?.median).toBeCloseTo(100 / 88, 9);
    const text = floorSection(split) ?? '';
    expect(text).toContain(
      '| **jwt-grpc** | single-es256-1x50 | 100.0 (96.0-104.0) | 1.25x (3 rounds: no interval) | 1.14x (3 rounds: no interval) | met (≤ 1.3x) |',
    );
    // Go's single round has no reading of its own: the median node:crypto reading of the run.
    expect(text).toContain(
      '| go | single-es256-1x50 | 120.0 (120.0-120.0) | 1.50x (1 round: no interval) | 1.36x (1 round: no interval) |',
    );
    expect(text).toContain(
      '| node:crypto alone (no server) | sign + verify loop | 88.0 (88.0-88.0) | 1.10x (4 readings: no interval) | 1.00x |  |',
    );
    // (1.3 - 1.1) x 80 µs.
    expect(text).toContain(`the ${FLOOR_TARGET}x target leaves 16.0 µs a call for everything else a server does`);
  });
});

describe.skipIf(process.platform !== 'linux')("node:crypto's loop, the real child", () => {
  it('prints CPU µs per sign and per verify of P-256, in the range of a CPU that runs OpenSSL', () => {
    expect(existsSync(NODE_CRYPTO_CHILD), 'dist/ missing: run npm run build').toBe(true);
    const result = runCommand(process.execPath, [NODE_CRYPTO_CHILD, '0.2'], { timeoutMs: 30_000 });
    expect(result.status, result.stderr).toBe(0);
    const reading = parseNodeCryptoLine(result.stdout);
    expect(reading).not.toBeNull();
    // A P-256 signature costs tens of µs on any x86-64 of the last decade, a verification more.
    expect(reading?.signUs).toBeGreaterThan(1);
    expect(reading?.signUs).toBeLessThan(2000);
    expect(reading?.verifyUs).toBeGreaterThan(reading?.signUs ?? 0);
  });

  it('refuses a missing or bad SECONDS with exit status 2, naming it', () => {
    const result = runCommand(process.execPath, [NODE_CRYPTO_CHILD, 'soon'], { timeoutMs: 30_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('SECONDS must be a positive number, got "soon"');
  });
});

/**
 * The Kubernetes manifests of deploy/kubernetes, checked offline by their validator
 * (deploy/kubernetes/validate: strict decoding into k8s.io/api's types, then the
 * cross-references): the shipped files pass, and copies with one deliberate mistake each
 * fail with a message naming it. Nothing here talks to a cluster.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath } from '../../bench/kit/paths.js';
import { TEST_GO_BUILD_TIMEOUT_MS, goBuild } from '../../bench/kit/go-build.js';
import { runCommand } from '../../bench/kit/exec.js';

const MANIFESTS = repoPath('deploy', 'kubernetes');
const VALIDATOR = join(MANIFESTS, 'validate');

describe('deploy/kubernetes manifests, validated offline', () => {
  let dir: string;
  let validator: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-manifests-'));
    validator = join(dir, 'validate');
    // k8s.io/api comes from the Go module proxy on a first build, then from the module cache.
    const built = goBuild(VALIDATOR, validator, 'the manifest validator (deploy/kubernetes/validate)', TEST_GO_BUILD_TIMEOUT_MS);
    if (!built.ok) throw new Error(built.reason);
  }, 300_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The shipped manifests copied into a folder of their own, `change` applied to one of them. */
  function copyWith(file: string, change: (text: string) => string): string[] {
    const copy = mkdtempSync(join(dir, 'case-'));
    const files = readdirSync(MANIFESTS).filter((name) => name.endsWith('.yaml'));
    for (const name of files) copyFileSync(join(MANIFESTS, name), join(copy, name));
    const original = readFileSync(join(copy, file), 'utf8');
    const changed = change(original);
    expect(changed, `the change to ${file} applies`).not.toBe(original);
    writeFileSync(join(copy, file), changed);
    return files.map((name) => join(copy, name));
  }

  const validate = (files: readonly string[]) => runCommand(validator, files, { timeoutMs: 30_000 });

  it('accepts the shipped manifests', () => {
    const files = readdirSync(MANIFESTS)
      .filter((name) => name.endsWith('.yaml'))
      .map((name) => join(MANIFESTS, name));
    const result = validate(files);
    expect(result.status, result.stderr).toBe(0);
    for (const kind of ['deployment.yaml: jwt-grpc', 'service.yaml: jwt-grpc-headless', 'pdb.yaml', 'hpa.yaml', 'kustomization.yaml']) {
      expect(result.stdout).toContain(kind);
    }
  });

  it('rejects a readiness probe on a port the container does not declare', () => {
    const files = copyWith('deployment.yaml', (text) => text.replace(/(readinessProbe:\n\s+grpc:\n\s+port:) 50051/, '$1 50052'));
    const result = validate(files);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/readinessProbe probes port 50052, which the container does not declare/);
  });

  it('rejects an unknown field, naming it', () => {
    const files = copyWith('deployment.yaml', (text) =>
      text.replace('terminationGracePeriodSeconds: 30', 'terminationGracePeriodSecond: 30'),
    );
    const result = validate(files);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/deployment\.yaml \(document 1\):.*unknown field "terminationGracePeriodSecond"/);
  });

  it('rejects a drain longer than the termination grace period', () => {
    const files = copyWith('deployment.yaml', (text) => text.replace('--grace-ms=20000', '--grace-ms=40000'));
    const result = validate(files);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/terminationGracePeriodSeconds must cover preStop \(5 s\) \+ --grace-ms \(40000 ms\)/);
  });
});

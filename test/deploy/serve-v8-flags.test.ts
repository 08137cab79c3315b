/**
 * The image and the Kubernetes Deployment give `serve` its V8 flags through NODE_OPTIONS, so
 * that a container start is one Node start: without them `serve` restarts itself once
 * (src/cli/v8-flags.ts), a second boot on every scale-up and every restarted pod.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../bench/kit/paths.js';
import { SERVE_V8_FLAGS } from '../../src/cli/v8-flags.js';

function dockerfileNodeOptions(): string[] {
  const text = readFileSync(repoPath('deploy', 'docker', 'Dockerfile'), 'utf8');
  return (
    text
      .match(/^ENV NODE_OPTIONS=(.*)$/m)?.[1]
      ?.trim()
      .split(/\s+/) ?? []
  );
}

function deploymentNodeOptions(): string[] {
  const text = readFileSync(repoPath('deploy', 'kubernetes', 'deployment.yaml'), 'utf8');
  return (
    text
      .match(/- name: NODE_OPTIONS\n\s+value: (.*)$/m)?.[1]
      ?.trim()
      .split(/\s+/) ?? []
  );
}

describe('deploy: serve starts once', () => {
  it('the image sets every flag serve would restart itself for', () => {
    expect(dockerfileNodeOptions()).toEqual(expect.arrayContaining([...SERVE_V8_FLAGS]));
  });

  it("the Deployment sets them too (its NODE_OPTIONS replaces the image's)", () => {
    expect(deploymentNodeOptions()).toEqual(expect.arrayContaining([...SERVE_V8_FLAGS]));
  });
});

/**
 * The image and the Kubernetes Deployment give `serve` its V8 flags through NODE_OPTIONS:
 * `serve` adds them only to cluster workers it forks (src/cli/v8-flags.ts), and a single
 * process is not restarted for them, so without NODE_OPTIONS a container's one process
 * would run with V8's default young generation (more peak memory).
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

describe('deploy: serve runs with its V8 flags in a container', () => {
  it('the image sets every flag serve gives its workers', () => {
    expect(dockerfileNodeOptions()).toEqual(expect.arrayContaining([...SERVE_V8_FLAGS]));
  });

  it("the Deployment sets them too (its NODE_OPTIONS replaces the image's)", () => {
    expect(deploymentNodeOptions()).toEqual(expect.arrayContaining([...SERVE_V8_FLAGS]));
  });
});

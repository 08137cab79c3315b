/**
 * README.md stays a door a newcomer walks through: short, with the two commands of the
 * set-up, and a Quick start that needs nothing from the repository (the guides are docs/*.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

const README = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');

function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`);
  expect(start, `README section ${heading}`).toBeGreaterThanOrEqual(0);
  const end = README.indexOf('\n## ', start + heading.length + 4);
  return README.slice(start, end < 0 ? undefined : end);
}

describe('README.md', () => {
  it('is at most 300 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('says how to set up, install the packed package and start', () => {
    expect(section('Set-up')).toContain('npm run bench');
    expect(section('Set-up')).toContain('npm test');
    expect(section('Install the package')).toMatch(/npm pack[\s\S]*npm install \S+\.tgz/);
  });

  it('runs its Quick start through the installed bin, the CLI client and grpcurl, with no repository file', () => {
    const quickStart = section('Quick start');
    // The server through its bin, so that `kill %1` reaches it (npx would exit 143 at once, leaving it draining).
    for (const command of ['node_modules/.bin/jwt-grpc serve', 'npx jwt-grpc token', 'npx jwt-grpc verify', 'grpcurl ', 'kill %1; wait %1'])
      expect(quickStart).toContain(command);
    expect(quickStart).not.toMatch(/bench\/fixtures|--proto proto\//);
  });
});

/**
 * Verifiers nobody here wrote, run as a user would: PyJWT's PyJWKClient (in a pinned venv
 * under .tools/) and coreos/go-oidc v3 (test/discovery/go-oidc, built with `go build`).
 * Each takes an issuer URL and tokens, and prints one line per token. Installed on first
 * use; when that is impossible (no pip, no Go module proxy) the reason is returned so the
 * test can skip saying why.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runStep } from '../../bench/kit/launcher.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const TOOLS = fileURLToPath(new URL('../../.tools/', import.meta.url));
const PYJWT = { pyjwt: '2.15.1', cryptography: '50.0.2' } as const;
const VENV = join(TOOLS, `python-pyjwt-${PYJWT.pyjwt}`);
const GO_OIDC = join(TOOLS, 'bin', 'go-oidc-verify-v3.21.0');

/** A command's stdout, or an error naming the step (`what`) that failed or hung, with its output. */
function run(
  command: string,
  args: readonly string[],
  options: { input?: string; cwd?: string; timeoutMs?: number; what?: string } = {},
): Promise<string> {
  return runStep(command, args, {
    cwd: options.cwd,
    input: options.input ?? '',
    timeoutMs: options.timeoutMs ?? 120_000,
    what: options.what,
  });
}

/** A runnable verifier: `verify(issuer, tokens)` gives one line per token. */
export interface ForeignVerifier {
  verify(issuer: string, tokens: readonly string[]): Promise<string[]>;
}

/** PyJWT's PyJWKClient, or why it cannot run here. */
export async function pyjwtVerifier(): Promise<ForeignVerifier | string> {
  const python = join(VENV, 'bin', 'python');
  const ready = async (): Promise<boolean> =>
    existsSync(python) &&
    (await run(python, ['-c', 'import jwt, cryptography']).then(
      () => true,
      () => false,
    ));
  if (!(await ready())) {
    try {
      mkdirSync(TOOLS, { recursive: true });
      await run('python3', ['-m', 'venv', VENV]);
      await run(join(VENV, 'bin', 'pip'), ['install', '--quiet', `PyJWT==${PYJWT.pyjwt}`, `cryptography==${PYJWT.cryptography}`], {
        timeoutMs: 300_000,
        what: `pip install of PyJWT ${PYJWT.pyjwt} (from PyPI)`,
      });
    } catch (err) {
      return `PyJWT ${PYJWT.pyjwt} could not be installed with pip: ${(err as Error).message.split('\n')[0]}`;
    }
  }
  const script = join(HERE, 'python', 'pyjwt_verify.py');
  return {
    verify: async (issuer, tokens) => (await run(python, [script, issuer], { input: `${tokens.join('\n')}\n` })).trim().split('\n'),
  };
}

/** coreos/go-oidc v3.21.0, or why it cannot be built here. */
export async function goOidcVerifier(): Promise<ForeignVerifier | string> {
  if (!existsSync(GO_OIDC)) {
    try {
      await run('go', ['build', '-o', GO_OIDC, '.'], {
        cwd: join(HERE, 'go-oidc'),
        timeoutMs: 300_000,
        what: 'go build of go-oidc v3.21.0 (modules from the Go module proxy)',
      });
    } catch (err) {
      return `go-oidc v3.21.0 could not be built (Go or its module proxy unavailable): ${(err as Error).message.split('\n')[0]}`;
    }
  }
  return { verify: async (issuer, tokens) => (await run(GO_OIDC, [issuer], { input: `${tokens.join('\n')}\n` })).trim().split('\n') };
}

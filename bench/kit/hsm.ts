/**
 * For the key backend tests and benchmark: a SoftHSM2 token of its own (a temporary config and token directory, so no test
 * touches the system's tokens), and a local-kms server on a free port with a temporary
 * data directory. Each says why it cannot run when its program is missing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GO_TOOLS, findGoTool, goInstallCommand } from './tools.js';
import { type LaunchedProcess, launch } from './launcher.js';
import { waitUntil } from './wait.js';

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';
export const PIN = '246810';
const SO_PIN = '13579';

/** Why SoftHSM2 tests cannot run here, or undefined. */
export function softhsmMissing(): string | undefined {
  if (!existsSync(SOFTHSM_MODULE)) return `softhsm2 is not installed (${SOFTHSM_MODULE} missing): apt-get install softhsm2`;
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'softhsm2 is not installed (softhsm2-util missing): apt-get install softhsm2';
  }
  return undefined;
}

export interface SoftToken {
  /** SOFTHSM2_CONF, for child processes. */
  readonly env: Readonly<Record<string, string>>;
  /** A file holding the PIN, mode 0600. */
  readonly pinFile: string;
  /** The URI of the key labelled `object`, PIN from the pin file. */
  uri(object: string): string;
}

/**
 * Initialises token `jwt` under `dir` and points this process's SOFTHSM2_CONF at it
 * (read once, when the module is first initialised here).
 */
export function softToken(dir: string): SoftToken {
  const tokens = join(dir, 'tokens');
  mkdirSync(tokens, { recursive: true });
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const env = { SOFTHSM2_CONF: conf };
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'jwt', '--pin', PIN, '--so-pin', SO_PIN], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  process.env['SOFTHSM2_CONF'] = conf;
  const pinFile = join(dir, 'hsm-pin.txt');
  writeFileSync(pinFile, `${PIN}\n`, { mode: 0o600 });
  return { env, pinFile, uri: (object) => `pkcs11:token=jwt;object=${object}?module-path=${SOFTHSM_MODULE}&pin-source=file:${pinFile}` };
}

/** local-kms's path, or why there is none. */
export function findLocalKms(): { localKms: string } | { skip: string } {
  const found = findGoTool(GO_TOOLS.localKms);
  return found === null
    ? { skip: `local-kms is not installed: run \`npm run tools\`, or ${goInstallCommand(GO_TOOLS.localKms)}` }
    : { localKms: found };
}

/** Starts local-kms on `port` with its keys in `dataDir`; resolves once it answers. */
export async function startLocalKms(localKms: string, port: number, dataDir: string): Promise<LaunchedProcess> {
  const server = launch(localKms, [], { env: { PORT: String(port), KMS_DATA_PATH: dataDir, KMS_REGION: 'eu-west-1' } });
  const answers = (): Promise<boolean> =>
    fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }).then(
      () => true,
      () => false,
    );
  if (await waitUntil(answers, 5_000, 50)) return server;
  server.kill();
  throw new Error(`local-kms did not answer on port ${port}: ${server.stderr}`);
}

/** The environment the AWS SDK reads to reach local-kms (dummy credentials: local-kms checks none). */
export function kmsEnv(port: number): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
}

/**
 * Node's own ES256 work with no server around it: `crypto.sign` and `crypto.verify` of a
 * P-256 key over a token-sized signing input, in a loop, as jwt-grpc calls them (DER, the
 * bare KeyObject). Run by the floor probe (openssl-floor.ts), pinned by it to the server's
 * core right after `openssl speed`: the two readings side by side say how much of an ES256
 * call's distance to OpenSSL's floor is node:crypto's before any server code runs.
 *
 * Usage: `node node-crypto-child.js SECONDS`; prints one line,
 * `node-crypto sign <µs> verify <µs>`: CPU time of this process per operation, each loop
 * run for SECONDS of CPU time (the unit of openssl speed's figures and of the servers').
 */
import { Buffer } from 'node:buffer';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { NODE_CRYPTO_LINE, signingInputOfTokenSize } from './node-crypto-floor.js';

const seconds = Number(process.argv[2]);
if (!(seconds > 0)) {
  process.stderr.write(`node-crypto-child: SECONDS must be a positive number, got ${JSON.stringify(process.argv[2])}\n`);
  process.exit(2);
}

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const input = Buffer.from(signingInputOfTokenSize());
const signature = sign('sha256', input, privateKey);

/** CPU µs per run of `operation`, run in batches until `seconds` of this process's CPU time have passed. */
function cpuPerOperation(operation: () => void): number {
  const start = process.cpuUsage();
  let count = 0;
  let spent = 0;
  while (spent < seconds * 1e6) {
    for (let i = 0; i < 50; i++) operation();
    count += 50;
    const used = process.cpuUsage(start);
    spent = used.user + used.system;
  }
  return spent / count;
}

// Warm-up: the JIT, OpenSSL's first use of the key and of its tables.
for (let i = 0; i < 100; i++) verify('sha256', input, publicKey, sign('sha256', input, privateKey));
const signUs = cpuPerOperation(() => sign('sha256', input, privateKey));
const verifyUs = cpuPerOperation(() => {
  if (!verify('sha256', input, publicKey, signature)) throw new Error('node-crypto-child: the signature did not verify');
});
process.stdout.write(`${NODE_CRYPTO_LINE} sign ${signUs.toFixed(3)} verify ${verifyUs.toFixed(3)}\n`);

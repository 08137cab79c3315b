/**
 * What the issuance flood needs (bench/attack/attackers.ts): a server under mutual TLS with a
 * policy and a status list (its index counter kept in a revocations file), and two callers the policy allows, each with its own client
 * certificate: the attacker and the legitimate caller. Neither entry names a rate, so both
 * get the policy's default one (docs/policy.md, "Issuance rate"): the guard under test.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeClientCert } from '../kit/caller-certs.js';
import { makeTestCerts } from '../kit/certs.js';
import { type AttackTls, FLOOD_SUBJECT } from './attackers.js';
import { CALLER_SUBJECT } from './caller.js';
import type { CellSpec } from './cell.js';

/** The server's flags, the two callers' files, and the folder that holds them. */
export interface FloodCredentials {
  readonly serveFlags: readonly string[];
  readonly attacker: AttackTls;
  readonly caller: AttackTls;
  remove(): void;
}

/** Makes a CA, the server's certificate, two client certificates and the policy file, in a temporary folder. */
export function makeFloodCredentials(): FloodCredentials {
  const certs = makeTestCerts();
  const tlsOf = (name: string, dns: string): AttackTls => {
    const cert = makeClientCert(certs, name, `DNS:${dns}`);
    return { ca: certs.files.caCert, cert: cert.certFile, key: cert.keyFile };
  };
  const attacker = tlsOf('flood-attacker', 'attacker.example');
  const caller = tlsOf('flood-caller', 'caller.example');
  const policyFile = join(certs.dir, 'policy.json');
  const policy = {
    callers: {
      'dns:attacker.example': { subjects: [FLOOD_SUBJECT] },
      'dns:caller.example': { subjects: [CALLER_SUBJECT] },
    },
  };
  writeFileSync(policyFile, `${JSON.stringify(policy)}\n`);
  return {
    serveFlags: [
      ...['--tls-cert', certs.files.serverCert, '--tls-key', certs.files.serverKey, '--tls-client-ca', certs.files.caCert],
      ...['--policy', policyFile, '--status-list', '--revocations', join(certs.dir, 'revocations.jsonl')],
    ],
    attacker,
    caller,
    remove: () => certs.remove(),
  };
}

/** A cell's part of the issuance flood: the server's flags and the two callers' certificates. */
export function floodSpec(flood: FloodCredentials): Pick<CellSpec, 'serveFlags' | 'tls'> {
  return { serveFlags: flood.serveFlags, tls: { caller: flood.caller, attacker: flood.attacker } };
}

/**
 * Keys whose private part never enters the process: a key file entry names a handle
 * (`"pkcs11": "pkcs11:token=...;object=..."`, `"kms": "alias/..."`) and caches the public
 * members; a {@link KeyBackend}, registered by the member that names it, opens the handle
 * into a public JWK and an asynchronous `sign`. The signer, the key set, rotation, GetJwks
 * and cluster mode see one kind of handle, whatever the backend: adding one (GCP KMS, Azure
 * Key Vault, Vault transit) is a new module that calls {@link registerKeyBackend}, nothing else.
 */
import { Buffer } from 'node:buffer';
import { createPublicKey } from 'node:crypto';
import { ALGORITHM_SPECS, type CheckSignature } from '../algorithms/index.js';
import type { Algorithm } from '../algorithms/names.js';
import { JwtGrpcError, invalidOption } from '../base/errors.js';

/**
 * A public JWK's members as a backend reports them (kty, crv, x, y or n, e). Declared here
 * rather than imported from node:crypto: this type reaches the package's declarations, and
 * the newest @types/node no longer exports `JsonWebKey` from node:crypto.
 */
export interface JsonWebKey {
  readonly kty?: string;
  readonly crv?: string;
  readonly [member: string]: unknown;
}

/**
 * A handle opened by its backend: the public key the backend reports, and a signature over
 * the JWS signing input in its JOSE form (ECDSA r||s, RSA's signature bytes).
 *
 * @example
 * ```ts
 * // hidden: declare const opened: OpenedKey;
 * const signature: Buffer = await opened.sign(Buffer.from('header.payload'));
 * await opened.close();
 * ```
 */
export interface OpenedKey {
  readonly publicJwk: JsonWebKey;
  /**
   * The reference this key was found under, pinned: what a later open of the same handle
   * uses instead of the key file's (KMS: the key ARN `GetPublicKey` answers, so an alias
   * moved to another key since is never followed). Undefined when the reference is already
   * the key's own.
   */
  readonly pinnedRef?: string;
  /** Signs `data` (the JWS signing input, not a digest) with `alg`; `signal` aborts a call that took too long. */
  sign(data: Buffer, signal: AbortSignal): Promise<Buffer>;
  /** Releases what `open` took (a session, a client); called once. */
  close(): Promise<void>;
}

/**
 * What bounds one {@link KeyBackend.open}: `signal` aborts it (the caller stops waiting),
 * `timeoutMs` is the deadline each call to the backend gets (`keyBackendTimeoutMs`), for
 * the backend's own client (KMS: the SDK's connection and request timeouts).
 *
 * @example
 * ```ts
 * const limits: BackendCallLimits = { signal: AbortSignal.timeout(2000), timeoutMs: 2000 };
 * ```
 */
export interface BackendCallLimits {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
}

/**
 * Where keys that are handles live. `member` is the key file member that names a handle
 * of this backend; `packageName` is the optional npm package it loads on first use.
 *
 * @example
 * ```ts
 * registerKeyBackend({
 *   member: 'vault',
 *   packageName: 'node-vault',
 *   open: async (ref, alg) => ({ publicJwk, sign: async (data) => transitSign(ref, alg, data), close: async () => {} }),
 * });
 * ```
 */
export interface KeyBackend {
  readonly member: string;
  readonly packageName: string;
  /**
   * Opens `ref` for signing with `alg`, within `limits`; a PIN, credential or reference
   * error rejects with a message naming the reference, never a secret.
   */
  open(ref: string, alg: Algorithm, limits: BackendCallLimits): Promise<OpenedKey>;
  /** Creates a new key of `alg` inside the backend at `ref`, within `limits` (`keys generate --pkcs11/--kms`); resolves with the reference to store. */
  generate?(ref: string, alg: Algorithm, limits: BackendCallLimits): Promise<string>;
}

const backends = new Map<string, KeyBackend>();

/**
 * Makes a backend usable from key files under its `member`. @internal
 *
 * @example
 * ```ts
 * registerKeyBackend(pkcs11Backend);
 * ```
 */
export function registerKeyBackend(backend: KeyBackend): void {
  backends.set(backend.member, backend);
}

/** The backend a key file member names, or undefined. @internal */
export function keyBackend(member: string): KeyBackend | undefined {
  return backends.get(member);
}

/** The members that name a handle, in registration order. @internal */
export function keyBackendMembers(): string[] {
  return [...backends.keys()];
}

/**
 * How long a call to an HSM or a KMS may take (a signature, queueing for the backend
 * included, or an open) before it is given up and GenerateJwt answers UNAVAILABLE: long
 * enough for a KMS call across a region (tens of ms) with retries, short enough that a
 * caller's own deadline (often 5 to 10 s) still sees the answer. Option `keyBackendTimeoutMs`.
 */
export const KEY_BACKEND_TIMEOUT_MS = 2000;
/** The longest `keyBackendTimeoutMs`: a minute, past any backend a caller would still wait for. */
export const KEY_BACKEND_MAX_TIMEOUT_MS = 60_000;

/**
 * `keyBackendTimeoutMs` as loadKeys takes it, under the option table's rule (an integer from
 * 1 to {@link KEY_BACKEND_MAX_TIMEOUT_MS}, the same words), which sits above the key layer;
 * {@link KEY_BACKEND_TIMEOUT_MS} when absent. @internal
 *
 * @example
 * ```ts
 * const timeoutMs = keyBackendTimeoutOption(options.keyBackendTimeoutMs);
 * ```
 */
export function keyBackendTimeoutOption(value: unknown): number {
  if (value === undefined) return KEY_BACKEND_TIMEOUT_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > KEY_BACKEND_MAX_TIMEOUT_MS) {
    throw invalidOption('keyBackendTimeoutMs', `must be an integer from 1 to ${KEY_BACKEND_MAX_TIMEOUT_MS}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Signatures in flight per handle, in this process: a backend is not sent more at once. */
export const KEY_BACKEND_CONCURRENCY = 16;
/** Calls waiting for one of those slots; past this, UNAVAILABLE at once rather than a queue that only grows. */
export const KEY_BACKEND_MAX_QUEUED = 4096;
/** Failures in a row that open the circuit breaker. */
export const KEY_BACKEND_BREAKER_FAILURES = 5;
/** How long an open breaker refuses before it lets one trial call through. */
export const KEY_BACKEND_BREAKER_COOLDOWN_MS = 5000;
/** What the signature that checks a handle as it opens signs: not a JWS signing input (it has spaces), so the signature is no token. */
const OPEN_CHECK_INPUT = Buffer.from('jwt-grpc key backend open check');
/**
 * What a GenerateJwt caller is told when a handle cannot sign, whatever the cause: a
 * backend's own error names accounts, roles, instances and key ARNs, which are the
 * operator's to read (in the log), not the caller's.
 */
export const KEY_BACKEND_UNAVAILABLE_MESSAGE = 'key backend unavailable';

/** Signatures a backend returned that did not verify with the key's public key, by kid, in this process. */
const badSignatures = new Map<string, { readonly labels: { readonly kid: string; readonly backend: string }; count: number }>();

/**
 * The signatures each handle's backend returned that did not verify with the key's public
 * key, in this process, by kid and backend: what `jwt_grpc_key_backend_bad_signatures_total`
 * reports. Such a signature is never handed to a caller. @internal
 *
 * @example
 * ```ts
 * for (const { labels, count } of keyBackendBadSignatures()) console.log(labels.kid, count);
 * ```
 */
export function keyBackendBadSignatures(): readonly {
  readonly labels: { readonly kid: string; readonly backend: string };
  readonly count: number;
}[] {
  return [...badSignatures.values()];
}

function countBadSignature(kid: string, backend: string): void {
  let cell = badSignatures.get(kid);
  if (cell === undefined) {
    cell = { labels: { kid, backend }, count: 0 };
    badSignatures.set(kid, cell);
  }
  cell.count += 1;
}

/** Told when any handle of this process goes down or comes back: readiness recomputes. */
const changeListeners = new Set<() => void>();

function tellChange(): void {
  for (const listener of changeListeners) listener();
}

/**
 * Calls `listener` whenever a key handle of this process stops or starts being able to sign; returns what removes it. @internal
 *
 * @example
 * ```ts
 * const stop = onKeyBackendChange(() => setServing(signingReady(core.keys) ? 'SERVING' : 'NOT_SERVING'));
 * ```
 */
export function onKeyBackendChange(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

/** A backend failure as GenerateJwt answers it: UNAVAILABLE, naming the key. @internal */
export class KeyBackendUnavailable extends JwtGrpcError {}

function unavailable(kid: string, member: string, why: string, cause?: unknown): KeyBackendUnavailable {
  return new KeyBackendUnavailable('ERR_KEY_BACKEND_UNAVAILABLE', `key ${kid} (${member}) cannot sign: ${why}`, { field: kid, cause });
}

/** Whether two public JWKs are the same key (the members that define it). */
export function samePublicKey(a: JsonWebKey, b: JsonWebKey): boolean {
  const members = a.kty === 'RSA' ? ['kty', 'n', 'e'] : ['kty', 'crv', 'x', 'y'];
  return members.every((member) => (a as Record<string, unknown>)[member] === (b as Record<string, unknown>)[member]);
}

/**
 * A key that is a handle, as a key set holds it: opened on first use (or by {@link open}
 * at start), in each process on its own (a cluster worker opens its own session or client),
 * reopened after a failure, so a worker that loses its session recovers without a restart.
 * Signing is bounded three ways: a deadline (on the open too), {@link KEY_BACKEND_CONCURRENCY}
 * calls at once, and a circuit breaker that refuses at once after
 * {@link KEY_BACKEND_BREAKER_FAILURES} failures in a row, for {@link KEY_BACKEND_BREAKER_COOLDOWN_MS}.
 * Every signature is verified with the key file's public key before it is returned: one
 * that does not verify is counted, opens the breaker (readiness NOT_SERVING) and is never
 * handed out. @internal
 */
export class KeyHandle {
  readonly member: string;
  readonly ref: string;
  readonly kid: string;
  readonly alg: Algorithm;
  readonly publicJwk: JsonWebKey;
  readonly #backend: KeyBackend;
  #opened: Promise<OpenedKey> | undefined;
  /** The reference the first open pinned (KMS: the key ARN): every later open uses it, never the key file's alias again. */
  #pinnedRef: string | undefined;
  #check: CheckSignature | undefined;
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];
  #failures = 0;
  #openUntil = 0;
  #closed = false;
  /** True from the breaker opening until a signature succeeds again: what readiness reports. */
  #down = false;
  /** The deadline of the last call (or of the open at start): what an open and the recovery probe wait. */
  #timeoutMs = 0;
  #probe: NodeJS.Timeout | undefined;

  constructor(backend: KeyBackend, ref: string, kid: string, alg: Algorithm, publicJwk: JsonWebKey) {
    this.#backend = backend;
    this.member = backend.member;
    this.ref = ref;
    this.kid = kid;
    this.alg = alg;
    this.publicJwk = publicJwk;
  }

  /** False from the breaker opening until the backend signs again: readiness reports NOT_SERVING for signing. */
  get canSign(): boolean {
    return !this.#down;
  }

  /**
   * Opens the handle now, each backend call within `timeoutMs`, and checks the backend holds
   * the key the key file says: a different public key is refused (a token signed with it
   * would not verify, or worse, verify under another kid), and so is a backend whose first
   * signature does not verify with that public key. Rejects with `ERR_INVALID_KEY` naming
   * the kid, or `ERR_KEY_BACKEND_UNAVAILABLE` when the backend does not answer in time.
   */
  async open(timeoutMs: number): Promise<void> {
    this.#timeoutMs = timeoutMs;
    await this.#session();
  }

  /**
   * The open session, or one opening: shared by the calls that wait for it, with its own
   * deadline (not one caller's), so a backend that never answers leaves no open pending for
   * the calls after it; a failed or late open is tried again on the next call.
   */
  #session(): Promise<OpenedKey> {
    if (this.#opened !== undefined) return this.#opened;
    const timeoutMs = this.#timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const opening = raceAbort(
      this.#backend.open(this.#pinnedRef ?? this.ref, this.alg, { signal, timeoutMs }).then((opened) => this.#checkOpened(opened, signal)),
      signal,
    ).catch((err: unknown) => {
      if (this.#opened === opening) this.#opened = undefined;
      if (signal.aborted)
        throw unavailable(
          this.kid,
          this.member,
          `the backend did not open the key within ${timeoutMs} ms (option keyBackendTimeoutMs)`,
          err,
        );
      throw err;
    });
    this.#opened = opening;
    return opening;
  }

  /** The checks of {@link open} on a key just opened; a key that fails them is closed. */
  async #checkOpened(opened: OpenedKey, signal: AbortSignal): Promise<OpenedKey> {
    try {
      if (signal.aborted) throw signal.reason;
      if (!samePublicKey(opened.publicJwk, this.publicJwk)) {
        const now = opened.pinnedRef === undefined || opened.pinnedRef === this.ref ? '' : ` (now ${opened.pinnedRef})`;
        throw this.#notTheKey(`${now} is not the public key the key file holds`);
      }
      if (!(await this.#signsForItsPublicKey(opened, signal))) {
        throw this.#notTheKey(' signs with a key other than the public key it reports (the signature made as it opens does not verify)');
      }
      this.#pinnedRef ??= opened.pinnedRef;
      return opened;
    } catch (err) {
      await opened.close().catch(() => undefined);
      throw err;
    }
  }

  /** Whether `signature` over `data` verifies with the key file's public key (prepared once). */
  #verifies(data: Buffer, signature: Buffer): boolean {
    this.#check ??= ALGORITHM_SPECS[this.alg].prepareVerify(
      createPublicKey({ key: this.publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' }),
    );
    return this.#check(data, signature.toString('base64url'));
  }

  /**
   * One signature as the handle opens, checked with the key file's public key: a backend that
   * reports one public key but signs with another is refused here, in every process that opens
   * it, rather than found out by the first verifier a token fails.
   */
  async #signsForItsPublicKey(opened: OpenedKey, signal: AbortSignal): Promise<boolean> {
    const signature = await raceAbort(opened.sign(OPEN_CHECK_INPUT, signal), signal);
    return this.#verifies(OPEN_CHECK_INPUT, signature);
  }

  #notTheKey(problem: string): JwtGrpcError {
    return new JwtGrpcError('ERR_INVALID_KEY', `key ${this.kid}: the ${this.member} key ${this.ref.split('?')[0]}${problem}`, {
      field: this.kid,
    });
  }

  /** Drops the session after a failure: the next call opens a new one. */
  #drop(): void {
    const opened = this.#opened;
    this.#opened = undefined;
    opened?.then((key) => key.close()).catch(() => undefined);
  }

  /**
   * Signs `data` within `timeoutMs`; rejects with {@link KeyBackendUnavailable} naming the key,
   * never falls back to another key, and never returns a signature that does not verify with
   * the key file's public key.
   */
  async sign(data: Buffer, timeoutMs: number): Promise<Buffer> {
    if (this.#closed) throw unavailable(this.kid, this.member, 'the key set was replaced');
    const now = Date.now();
    if (this.#failures >= KEY_BACKEND_BREAKER_FAILURES && now < this.#openUntil) {
      throw unavailable(
        this.kid,
        this.member,
        `${this.#failures} failures in a row; not retried for ${Math.ceil((this.#openUntil - now) / 1000)} s (circuit breaker)`,
      );
    }
    if (this.#inFlight >= KEY_BACKEND_CONCURRENCY && this.#waiting.length >= KEY_BACKEND_MAX_QUEUED) {
      throw unavailable(this.kid, this.member, `${KEY_BACKEND_MAX_QUEUED} signatures already wait for the backend`);
    }
    this.#timeoutMs = timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let holding = false;
    let signature: Buffer;
    try {
      await this.#slot(controller.signal);
      holding = true;
      signature = await raceAbort(
        this.#session().then((key) => key.sign(data, controller.signal)),
        controller.signal,
      );
    } catch (err) {
      this.#failed();
      throw this.#failure(err, controller.signal.aborted, timeoutMs);
    } finally {
      clearTimeout(timer);
      if (holding) this.#release();
    }
    if (!this.#verifies(data, signature)) throw this.#badSignature();
    this.#succeeded();
    return signature;
  }

  /** A failed signature as the caller's error: UNAVAILABLE naming the key and why (a deadline, the backend's error). */
  #failure(err: unknown, late: boolean, timeoutMs: number): KeyBackendUnavailable {
    if (err instanceof KeyBackendUnavailable) return err;
    if (late) return unavailable(this.kid, this.member, `no answer within ${timeoutMs} ms (option keyBackendTimeoutMs)`, err);
    if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_KEY') return unavailable(this.kid, this.member, err.message, err);
    return unavailable(this.kid, this.member, describeFailure(err), err);
  }

  /**
   * A signature that does not verify with the key file's public key: the backend signs with
   * another key (a token key replaced under the same label, a reference now naming another
   * key) or answers garbage. Counted, the session dropped (its reopen checks the key again),
   * the breaker opened at once: readiness says NOT_SERVING until a probe signs correctly.
   */
  #badSignature(): KeyBackendUnavailable {
    countBadSignature(this.kid, this.member);
    this.#drop();
    this.#failures = Math.max(this.#failures + 1, KEY_BACKEND_BREAKER_FAILURES);
    this.#openUntil = Date.now() + KEY_BACKEND_BREAKER_COOLDOWN_MS;
    this.#goDown();
    return unavailable(this.kid, this.member, "the backend's signature does not verify with the key file's public key; not returned");
  }

  /** Waits for one of the handle's concurrency slots, or the deadline. */
  #slot(signal: AbortSignal): Promise<void> {
    if (this.#inFlight < KEY_BACKEND_CONCURRENCY) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const take = (): void => {
        signal.removeEventListener('abort', give);
        this.#inFlight += 1;
        resolve();
      };
      const give = (): void => {
        const at = this.#waiting.indexOf(take);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', give, { once: true });
      this.#waiting.push(take);
    });
  }

  #release(): void {
    this.#inFlight -= 1;
    this.#waiting.shift()?.();
  }

  #succeeded(): void {
    this.#failures = 0;
    if (!this.#down) return;
    this.#down = false;
    clearTimeout(this.#probe);
    tellChange();
  }

  #failed(): void {
    this.#drop();
    this.#failures += 1;
    if (this.#failures < KEY_BACKEND_BREAKER_FAILURES) return;
    this.#openUntil = Date.now() + KEY_BACKEND_BREAKER_COOLDOWN_MS;
    this.#goDown();
  }

  /** Readiness NOT_SERVING for signing, and a probe after each cooldown, until a signature succeeds. */
  #goDown(): void {
    if (this.#down) return;
    this.#down = true;
    tellChange();
    this.#scheduleProbe();
  }

  /**
   * While down, a probe signs after each cooldown: a server that load balancers stopped
   * sending GenerateJwt to (NOT_SERVING) still finds out that its backend is back. The
   * probe's input is not a JWS signing input (it has spaces), so its signature is no token.
   */
  #scheduleProbe(): void {
    this.#probe = setTimeout(() => {
      if (!this.#down || this.#closed) return;
      this.sign(Buffer.from('jwt-grpc key backend probe'), this.#timeoutMs).catch(() => {
        if (this.#down && !this.#closed) this.#scheduleProbe();
      });
    }, KEY_BACKEND_BREAKER_COOLDOWN_MS + 10);
    this.#probe.unref();
  }

  /** Closes the session; later calls are refused. */
  async close(): Promise<void> {
    clearTimeout(this.#probe);
    this.#closed = true;
    const opened = this.#opened;
    this.#opened = undefined;
    await opened?.then((key) => key.close()).catch(() => undefined);
  }

  /** A handle is named by its member and kid only: the reference may carry a path, never a secret, but is not needed in logs. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `KeyHandle(${this.member}:${this.kid})`;
  }
}

/** `promise`, or a rejection as soon as `signal` aborts (the backend's call is abandoned, its slot released). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

/** A backend's error as one line: its message, without a stack. */
function describeFailure(err: unknown): string {
  return err instanceof Error ? (err.message.split('\n')[0] ?? 'failed') : String(err);
}

/**
 * Creates a key of `alg` inside the backend `member` names, at `ref`, each backend call
 * within `timeoutMs`, and returns its key
 * file entry: the reference and the public members the backend reports, never a private
 * member (`keys generate --pkcs11/--kms`, `keys rotate` with a handle). @internal
 *
 * @example
 * ```ts
 * const entry = await generateHandleEntry('pkcs11', 'pkcs11:token=jwt;object=es256-1?module-path=...', 'ES256', 'es256-1', 2000);
 * ```
 */
export async function generateHandleEntry(
  member: string,
  ref: string,
  alg: Algorithm,
  kid: string,
  timeoutMs: number,
): Promise<Record<string, unknown> & { kid: string; alg: string }> {
  const backend = keyBackend(member);
  if (backend?.generate === undefined)
    throw new JwtGrpcError('ERR_INVALID_KEY', `no key backend ${JSON.stringify(member)} that creates keys`, { field: member });
  const stored = await backend.generate(ref, alg, { signal: AbortSignal.timeout(timeoutMs), timeoutMs });
  return { kid, alg, [member]: stored, ...(await backendPublicJwk(member, stored, alg, timeoutMs)) };
}

/** The public JWK the backend reports for `ref`, within `timeoutMs` (`keys public` on a handle, and what `generate` caches). @internal */
export async function backendPublicJwk(member: string, ref: string, alg: Algorithm, timeoutMs: number): Promise<JsonWebKey> {
  const backend = keyBackend(member);
  if (backend === undefined) throw new JwtGrpcError('ERR_INVALID_KEY', `no key backend ${JSON.stringify(member)}`, { field: member });
  const opened = await backend.open(ref, alg, { signal: AbortSignal.timeout(timeoutMs), timeoutMs });
  try {
    return opened.publicJwk;
  } finally {
    await opened.close();
  }
}

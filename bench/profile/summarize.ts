/**
 * Where a server's CPU time goes, from a V8 `.cpuprofile` (`node --cpu-prof`): self time
 * per category (our code, grpc-js, OpenTelemetry, node:http2, node:crypto, protobuf, GC, idle...) and
 * per function. Self time, not total: each sample counts once, for the function that
 * was running.
 */

/** The parts of the `.cpuprofile` format (Chrome DevTools Profile) read here. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileShare {
  readonly name: string;
  /** Microseconds of samples. */
  readonly us: number;
  /** Share of all samples, idle included. */
  readonly share: number;
}

export interface ProfileSummary {
  readonly totalUs: number;
  /** Share of samples in which the main thread was busy (not idle). */
  readonly busyShare: number;
  readonly categories: readonly ProfileShare[];
  /** The same samples by stage of a GenerateJwt call ({@link stageOf}), start-up and idle left out. */
  readonly stages: readonly ProfileShare[];
  readonly functions: readonly ProfileShare[];
}

/** node:buffer's and V8's encoders, wherever they are called from: base64url, UTF-8, Buffer allocation. */
const BUFFER_FUNCTIONS = new Set([
  'base64urlSlice',
  'base64urlWrite',
  'utf8Slice',
  'utf8Write',
  'writeUtf8String',
  'FastBuffer',
  'fromStringFast',
  'from',
  'toString',
  'allocate',
  'allocUnsafe',
  'alloc',
  'createPool',
  'fromArrayLike',
  'byteLength',
  'concat',
  'subarray',
  'copy',
  'compare',
]);

/**
 * Where a sampled frame sits in a GenerateJwt call (issue 34's ES256 budget): the two
 * primitives, their key handling in node:crypto, the ECDSA closures with the DER <-> JOSE
 * conversions, the signer and claims, the self-check's verifier, buffers and encodings, the
 * protobuf codec, the transport, GC; start-up (module loading) and idle apart. By self time:
 * a Buffer made inside the signer is "buffers and encodings", not "signer".
 */
export function stageOf(functionName: string, url: string): string {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === 'signOneShot') return 'sign (node:crypto, OpenSSL)';
  if (functionName === 'verifyOneShot') return 'verify (node:crypto, OpenSSL)';
  if (url.startsWith('node:internal/crypto')) return 'key objects (node:crypto argument handling)';
  if (/\/algorithms\/ecdsa\.js$/.test(url)) return 'ECDSA closures, DER <-> JOSE';
  if (/\/tokens\/(sign|claims)\.js$/.test(url) || /\/jwt-service\/(core|request-claims|subject-pool|claims-json)\.js$/.test(url))
    return 'signer, claims, service';
  if (/\/tokens\/(verify|cache|result)\.js$/.test(url)) return 'self-check verifier (tokens/verify)';
  if (BUFFER_FUNCTIONS.has(functionName) && (url === '' || url.startsWith('node:buffer') || url.startsWith('node:internal/buffer')))
    return 'buffers, base64url, UTF-8';
  if (/\/jwt-service\/codec\//.test(url)) return 'protobuf codec';
  if (
    /\/(transport|server)\//.test(url) ||
    /^node:(net|internal\/(streams|stream_base_commons|net|timers|process\/task_queues|fixed_queue|async_hooks)|events|timers)/.test(url) ||
    functionName === 'writeBuffer' ||
    functionName === 'writev'
  ) {
    return 'transport (own HTTP/2, sockets, event loop)';
  }
  // Module loading and its URL and option look-ups: before the first call, stretched on a busy machine.
  if (/^node:internal\/(modules|url|options|bootstrap|main|process\/pre_execution)/.test(url)) return 'start-up and exit';
  if (
    /^(ModuleWrap|compileSourceTextModule|compileForInternalLoader|internalModuleStat|getPackageScopeConfig|reallyExit)$/.test(functionName)
  )
    return 'start-up and exit';
  return 'other (V8 builtins, unattributed)';
}

/** The category of a sampled frame, from its script URL (or its name, for V8's pseudo-frames). */
export function categoryOf(functionName: string, url: string): string {
  if (url === '') {
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(program)' || functionName === '(root)') return 'V8 and native (program)';
    return 'native builtins';
  }
  if (url.includes('/@grpc/grpc-js/')) return '@grpc/grpc-js';
  if (url.includes('/@opentelemetry/')) return 'OpenTelemetry (API, SDK, exporter)';
  if (/\/(@grpc\/proto-loader|protobufjs|@protobufjs)\//.test(url)) return 'protobufjs (proto-loader)';
  if (url.startsWith('node:internal/crypto')) return 'node:crypto';
  if (url.startsWith('node:internal/http2')) return 'node:http2';
  if (url.startsWith('node:')) return 'node (other)';
  if (/\/(dist\/)?(src|bench)\//.test(url) && !url.includes('/node_modules/')) return 'this repository';
  return 'other';
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const repo = url.search(/\/(dist\/)?(src|bench)\//);
  return repo >= 0 ? url.slice(repo + 1) : url;
}

function ranked(map: Map<string, number>, totalUs: number, limit: number): ProfileShare[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, us]) => ({ name, us, share: totalUs === 0 ? 0 : us / totalUs }));
}

/** Sums a profile's samples by category and by function (the `topFunctions` largest). */
export function summarizeProfile(profile: CpuProfile, topFunctions = 25): ProfileSummary {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byCategory = new Map<string, number>();
  const byStage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = frames.get(id);
    if (frame === undefined || us <= 0) return;
    totalUs += us;
    const category = categoryOf(frame.functionName, frame.url);
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
    const stage = stageOf(frame.functionName, frame.url);
    byStage.set(stage, (byStage.get(stage) ?? 0) + us);
    const name =
      frame.url === '' ? frame.functionName : `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  });
  const idle = byCategory.get('idle') ?? 0;
  return {
    totalUs,
    busyShare: totalUs === 0 ? 0 : (totalUs - idle) / totalUs,
    categories: ranked(byCategory, totalUs, Number.POSITIVE_INFINITY),
    stages: ranked(
      new Map([...byStage].filter(([stage]) => stage !== 'idle' && stage !== 'start-up and exit')),
      totalUs,
      Number.POSITIVE_INFINITY,
    ),
    functions: ranked(byFunction, totalUs, topFunctions),
  };
}

/**
 * The stages as text: each one's share of the busy samples (start-up left out) and, with the
 * server's measured CPU per call (/proc, utime + stime), that share of it in µs. A profile
 * samples wall time, so on a busy machine time the server waited for its core counts as
 * busy; the measured CPU per call does not, hence shares of it rather than sampled µs.
 */
export function formatStages(summary: ProfileSummary, cpuUsPerCall?: number): string[] {
  const busy = summary.stages.reduce((sum, s) => sum + s.us, 0);
  const line = (s: ProfileShare): string => {
    const share = busy === 0 ? 0 : s.us / busy;
    return `${(share * 100).toFixed(1).padStart(6)} %${cpuUsPerCall === undefined ? '' : `${(share * cpuUsPerCall).toFixed(1).padStart(8)} us/call`}  ${s.name}`;
  };
  return [
    `self time by stage of a call (share of busy, start-up left out${cpuUsPerCall === undefined ? '' : `; of ${cpuUsPerCall.toFixed(1)} us of server CPU per call`}):`,
    ...summary.stages.map(line),
  ];
}

/**
 * The summary as text. With `calls`, each category also in microseconds of CPU per call
 * (busy samples only), the unit the benchmark tables use; with `cpuUsPerCall`, the stages in it.
 */
export function formatProfileSummary(summary: ProfileSummary, calls?: number, cpuUsPerCall?: number): string {
  const perCall = (us: number): string => (calls === undefined || calls === 0 ? '' : `${(us / calls).toFixed(1).padStart(8)} us/call`);
  const line = (s: ProfileShare): string => `${(s.share * 100).toFixed(1).padStart(6)} %  ${perCall(s.us)}  ${s.name}`;
  return [
    `${(summary.totalUs / 1e6).toFixed(1)} s sampled, main thread busy ${(summary.busyShare * 100).toFixed(0)} %` +
      (calls === undefined ? '' : `, ${calls} calls`),
    '',
    'self time by category:',
    ...summary.categories.map(line),
    '',
    ...formatStages(summary, cpuUsPerCall),
    '',
    'self time by function (largest first):',
    ...summary.functions.map(line),
  ].join('\n');
}

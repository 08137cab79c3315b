/**
 * Where a server's CPU time goes, from a V8 `.cpuprofile` (`node --cpu-prof`): self time
 * per category (our code, grpc-js, OpenTelemetry, node:http2, node:crypto, protobuf, GC, idle...) and
 * per function. Self time, not total: each sample counts once, for the function that
 * was running.
 */

/** The parts of the `.cpuprofile` format (Chrome DevTools Profile) read here. */
export interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }[];
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
  readonly functions: readonly ProfileShare[];
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
  const byFunction = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = frames.get(id);
    if (frame === undefined || us <= 0) return;
    totalUs += us;
    const category = categoryOf(frame.functionName, frame.url);
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
    const name = frame.url === '' ? frame.functionName : `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  });
  const idle = byCategory.get('idle') ?? 0;
  return {
    totalUs,
    busyShare: totalUs === 0 ? 0 : (totalUs - idle) / totalUs,
    categories: ranked(byCategory, totalUs, Number.POSITIVE_INFINITY),
    functions: ranked(byFunction, totalUs, topFunctions),
  };
}

/**
 * The summary as text. With `calls`, each category also in microseconds of CPU per call
 * (busy samples only), the unit the benchmark tables use.
 */
export function formatProfileSummary(summary: ProfileSummary, calls?: number): string {
  const perCall = (us: number): string => (calls === undefined || calls === 0 ? '' : `${(us / calls).toFixed(1).padStart(8)} us/call`);
  const line = (s: ProfileShare): string => `${(s.share * 100).toFixed(1).padStart(6)} %  ${perCall(s.us)}  ${s.name}`;
  return [
    `${(summary.totalUs / 1e6).toFixed(1)} s sampled, main thread busy ${(summary.busyShare * 100).toFixed(0)} %` +
      (calls === undefined ? '' : `, ${calls} calls`),
    '',
    'self time by category:',
    ...summary.categories.map(line),
    '',
    'self time by function (largest first):',
    ...summary.functions.map(line),
  ].join('\n');
}

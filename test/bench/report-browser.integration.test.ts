/**
 * report.html in a real browser: Debian's chromium, headless, driven over the DevTools
 * protocol on `--remote-debugging-pipe` (NUL-terminated JSON on fds 3 and 4, no port and
 * no client library). The page must load with no console error, no exception and no
 * blocked request, and every chart's SVG must lay out with its marks. Skipped where no
 * `chromium` is on PATH (.ci/run installs it on Debian).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findOnPath, killGroup } from '../../bench/kit/exec.js';
import { renderSummary } from '../../bench/report/summary.js';
import { writeReport } from '../../bench/report/write-report.js';
import { EXPECTED_MARKS, reportFixture } from './report-fixture.js';

const CHROMIUM = findOnPath('chromium') ?? findOnPath('chromium-browser');

interface CdpMessage {
  readonly id?: number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly message: string };
  readonly sessionId?: string;
}

/** The DevTools protocol over chromium's pipe: commands by id, events to one listener. */
class Cdp {
  private nextId = 1;
  private buffer = '';
  private readonly pending = new Map<number, { resolve: (m: CdpMessage) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly toBrowser: Writable,
    fromBrowser: Readable,
    private readonly onEvent: (message: CdpMessage) => void,
  ) {
    fromBrowser.setEncoding('utf8');
    fromBrowser.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const message = JSON.parse(this.buffer.slice(0, end)) as CdpMessage;
        this.buffer = this.buffer.slice(end + 1);
        if (message.id === undefined) this.onEvent(message);
        else {
          const waiter = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error !== undefined) waiter?.reject(new Error(message.error.message));
          else waiter?.resolve(message);
        }
      }
    });
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<CdpMessage> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }) + '\0');
    });
  }
}

const dirs: string[] = [];
let browser: ChildProcess | null = null;
afterAll(async () => {
  // chromium's own children (zygote, renderer, utilities) write into its profile folder
  // too: the whole process group goes, and the folder once the browser has exited (retried,
  // as a child may still be closing its files).
  // The group goes even once chromium itself has exited: a child of it may outlive it.
  if (browser?.pid !== undefined) {
    const running = browser.exitCode === null && browser.signalCode === null;
    const exited = running ? new Promise((resolve) => browser?.once('exit', resolve)) : Promise.resolve();
    killGroup(browser.pid);
    await exited;
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe.skipIf(CHROMIUM === null)('report.html in headless chromium', () => {
  it('loads with no console error and every chart drawn with its marks', { timeout: 60_000 }, async () => {
    const results = reportFixture();
    const runDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-report-browser-'));
    const profile = mkdtempSync(join(tmpdir(), 'jwt-grpc-chromium-'));
    dirs.push(runDir, profile);
    const { charts, reportFile } = await writeReport(runDir, results, renderSummary(results), () => undefined);
    expect(charts.map((c) => c.name).sort()).toEqual(Object.keys(EXPECTED_MARKS).sort());

    browser = spawn(
      CHROMIUM as string,
      [
        '--headless',
        '--disable-gpu',
        '--no-sandbox',
        '--no-first-run',
        '--disable-extensions',
        `--user-data-dir=${profile}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true },
    );
    const problems: string[] = [];
    let loaded: () => void = () => undefined;
    const load = new Promise<void>((resolve) => (loaded = resolve));
    const cdp = new Cdp(browser.stdio[3] as Writable, browser.stdio[4] as Readable, (event) => {
      const p = event.params ?? {};
      if (event.method === 'Page.loadEventFired') loaded();
      if (event.method === 'Runtime.exceptionThrown') problems.push(`exception: ${JSON.stringify(p['exceptionDetails'])}`);
      if (event.method === 'Runtime.consoleAPICalled' && (p['type'] === 'error' || p['type'] === 'warning'))
        problems.push(`console.${String(p['type'])}: ${JSON.stringify(p['args'])}`);
      // Log.entryAdded carries what the browser itself reports: CSP violations, failed loads, bad markup.
      const entry = p['entry'] as { level?: string; text?: string } | undefined;
      if (event.method === 'Log.entryAdded' && (entry?.level === 'error' || entry?.level === 'warning'))
        problems.push(`log ${entry.level}: ${entry.text}`);
    });

    const { result: target } = await cdp.send('Target.createTarget', { url: 'about:blank' });
    const { result: attached } = await cdp.send('Target.attachToTarget', { targetId: target?.['targetId'], flatten: true });
    const session = attached?.['sessionId'] as string;
    for (const domain of ['Page', 'Runtime', 'Log']) await cdp.send(`${domain}.enable`, {}, session);
    await cdp.send('Page.navigate', { url: pathToFileURL(reportFile).href }, session);
    await load;

    // Per figure: its size as laid out, and the elements drawn in each `mark-<type> role-mark` group.
    const expression = `JSON.stringify([...document.querySelectorAll('figure')].map((figure) => {
      const svg = figure.querySelector('svg');
      const box = svg === null ? { width: 0, height: 0 } : svg.getBoundingClientRect();
      const marks = {};
      for (const group of figure.querySelectorAll('g.role-mark')) {
        const type = [...group.classList].find((c) => c.startsWith('mark-')).slice(5);
        marks[type] = (marks[type] ?? 0) + group.querySelectorAll('path, line, rect, text').length;
      }
      return { id: figure.id, width: box.width, height: box.height, marks };
    }))`;
    const { result: evaluated } = await cdp.send('Runtime.evaluate', { expression, returnByValue: true }, session);
    const figures = JSON.parse((evaluated!['result'] as { value: string }).value) as {
      id: string;
      width: number;
      height: number;
      marks: Record<string, number>;
    }[];
    await cdp.send('Browser.close').catch(() => undefined);

    expect(problems).toEqual([]);
    expect(figures.map((f) => f.id.replace(/^chart-/, '')).sort()).toEqual(Object.keys(EXPECTED_MARKS).sort());
    for (const figure of figures) {
      const name = figure.id.replace(/^chart-/, '');
      expect(figure.width, `${name} width`).toBeGreaterThan(100);
      expect(figure.height, `${name} height`).toBeGreaterThan(50);
      for (const type of EXPECTED_MARKS[name] ?? []) expect(figure.marks[type] ?? 0, `${name}: ${type} marks`).toBeGreaterThan(0);
    }
  });
});

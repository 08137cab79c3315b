import { join } from 'node:path';
import { repoPath, TOOLS_BIN_DIR } from '../kit/paths.js';
import { runCommand } from '../kit/exec.js';
import { type BuildOutcome, goBuild } from '../kit/go-build.js';

const RENDERER_DIR = repoPath('bench', 'ghz', 'html-report');
const RENDERER = join(TOOLS_BIN_DIR, 'ghz-html');
/** Calls kept in each page's embedded raw data (ghz embeds them all: megabytes per cell). */
const MAX_DETAILS = 10_000;

/**
 * Builds bench/ghz/html-report (ghz's own HTML printer behind a tiny main) into
 * .tools/bin/ghz-html. ghz writes one output format per run; rendering the HTML from
 * the JSON report spares a second ghz run per cell.
 */
export function buildHtmlRenderer(): BuildOutcome {
  return goBuild(RENDERER_DIR, RENDERER, 'the ghz HTML renderer (bench/ghz/html-report)');
}

/** Renders `<html>` from a ghz JSON report; returns an error message or null. */
export function renderHtmlReport(jsonPath: string, htmlPath: string): string | null {
  const result = runCommand(RENDERER, ['-max-details', String(MAX_DETAILS), jsonPath, htmlPath], { timeoutMs: 120_000 });
  return result.status === 0 ? null : `ghz-html failed: ${result.stderr.trim() || result.error}`;
}

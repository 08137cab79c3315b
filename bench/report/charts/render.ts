/**
 * Vega-Lite spec -> SVG text in Node, no browser: vega-lite compiles the spec to a Vega
 * spec, and a headless Vega view (renderer 'none') writes its scenegraph as SVG. Nothing
 * native is loaded (no canvas module): text widths are estimated, which is all an axis
 * label needs.
 */
import { View, parse } from 'vega';
import { type TopLevelSpec, compile } from 'vega-lite';

/** The look every chart shares: one font stack, no outer border. */
export const CHART_CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 11 },
  // No truncation: without a canvas, vega estimates text widths generously and would cut labels short.
  axisY: { labelLimit: 0 },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: 'bottom', labelLimit: 0 },
  title: { fontSize: 13, anchor: 'start', subtitleFontSize: 11, subtitleColor: '#555' },
} as const;

/** The SVG of one Vega-Lite spec. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

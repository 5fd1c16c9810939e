// Exports of the drawing (SVG, PNG) and of the plan (JSON), built inside the view. A webview cannot
// write files, so the bytes go to the host in a `saveFile` message; standalone, they are also offered
// as a download. Exported SVG carries its colours as presentation attributes resolved from the current
// theme, because the stylesheet and the --vscode-* variables do not travel with the file.

import type { Finding, Plan } from '../src/core/view';
import type { SaveFileMessage } from '../src/protocol/webview';
import { redactPlan } from './redact';
import type { TreeView } from './tree';

const SHAPE_PROPS = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray', 'opacity'] as const;
const TEXT_PROPS = ['fill', 'fill-opacity', 'font-family', 'font-size', 'font-weight', 'font-style', 'opacity'] as const;

/** Chrome reports color-mix() results as color(srgb r g b / a), which other SVG readers may not know. */
export function toRgb(value: string): string {
  const m = /^color\(srgb\s+([\d.e-]+)\s+([\d.e-]+)\s+([\d.e-]+)(?:\s*\/\s*([\d.e-]+))?\)$/.exec(value.trim());
  if (!m) return value;
  const c = (x: string): number => Math.max(0, Math.min(255, Math.round(parseFloat(x) * 255)));
  const a = m[4] !== undefined ? parseFloat(m[4]) : 1;
  return a < 1 ? `rgba(${c(m[1]!)}, ${c(m[2]!)}, ${c(m[3]!)}, ${Math.round(a * 1000) / 1000})` : `rgb(${c(m[1]!)}, ${c(m[2]!)}, ${c(m[3]!)})`;
}

function inlineStyles(svg: SVGSVGElement): void {
  const all = svg.querySelectorAll<SVGElement>('rect, path, circle, text');
  for (const e of all) {
    const cs = getComputedStyle(e);
    const props = e.tagName === 'text' ? TEXT_PROPS : SHAPE_PROPS;
    for (const p of props) {
      const v = cs.getPropertyValue(p);
      if (v && v !== 'normal' && !(p === 'opacity' && v === '1') && !(p === 'stroke-dasharray' && v === 'none')) e.setAttribute(p, toRgb(v));
    }
  }
  for (const e of svg.querySelectorAll('[class]')) e.removeAttribute('class');
  svg.removeAttribute('class');
  for (const e of svg.querySelectorAll('[tabindex]')) e.removeAttribute('tabindex');
}

/** The drawn tree as SVG text, literal values replaced when asked. */
export function exportSvg(tree: TreeView, plan: Plan, placeholders: boolean, stage: HTMLElement): { text: string; width: number; height: number } {
  const textPlan = placeholders ? redactPlan(plan) : plan;
  const { svg, width, height } = tree.buildExportSvg(textPlan);
  // Computed styles exist only for attached elements; the stage is an off-screen holder.
  stage.appendChild(svg);
  try {
    inlineStyles(svg);
  } finally {
    stage.removeChild(svg);
  }
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(svg)}`;
  return { text, width, height };
}

function utf8Base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** Largest PNG side and area; bigger drawings are scaled down to stay within canvas limits. */
const MAX_SIDE = 16_000;
const MAX_AREA = 60_000_000;

/** Rasterises SVG text to PNG (base64) through an <img> with a data: URL, which the page's policy allows. */
export async function svgToPng(svgText: string, width: number, height: number, scale = 2): Promise<string> {
  let k = scale;
  k = Math.min(k, MAX_SIDE / width, MAX_SIDE / height, Math.sqrt(MAX_AREA / (width * height)));
  const img = new Image();
  const loaded = new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error('the SVG could not be rasterised'));
  });
  img.src = `data:image/svg+xml;base64,${utf8Base64(svgText)}`;
  await loaded;
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(width * k));
  canvas.height = Math.max(1, Math.round(height * k));
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2D canvas');
  ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  return canvas.toDataURL('image/png').replace(/^data:image\/png;base64,/, '');
}

/** The plan model as JSON (without the derived `nodes` index, which repeats the tree). */
export function exportJson(plan: Plan, findings: Finding[], title: string, placeholders: boolean): string {
  const p = placeholders ? redactPlan(plan) : plan;
  const { nodes: _nodes, ...rest } = p;
  const doc = {
    exportedBy: 'Query Plan Inspector',
    version: 1,
    title,
    placeholders,
    plan: rest,
    findings,
  };
  return JSON.stringify(doc, null, 2);
}

/** A file name from a title: letters, digits and dashes only. */
export function fileNameFor(title: string, ext: string): string {
  const base = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'query-plan';
  return `${base}.${ext}`;
}

/** Standalone fallback: offers the bytes as a download through a data: link. */
export function download(msg: SaveFileMessage): void {
  const a = document.createElement('a');
  a.download = msg.fileName;
  a.href = msg.encoding === 'base64' ? `data:${msg.mimeType};base64,${msg.content}` : `data:${msg.mimeType};base64,${utf8Base64(msg.content)}`;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

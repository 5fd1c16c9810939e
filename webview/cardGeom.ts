// A card's size and its text cut to fit, from the card's spec (cards.ts) and text measured with the
// stylesheet's fonts (measure.ts). No drawing: tree.ts draws what this computes, treeLayout.ts places it.

import type { Plan, PlanNode } from '../src/core/view';
import { formatRatio } from '../src/core/view';
import { cardSpec, type CardRow, type CardSpec, type Level } from './cards';
import { FONT_PX, type Measurer } from './measure';

export const PAD_X = 9;
const MIN_W = 150;
const MAX_W = 340;
const ROW_H = 15;
export const HEAT_BAR_H = 4;
export const WASTE_H = 19;
export const FAR_TITLE_PX = 26;
export const FAR_DETAIL_PX = 21;
const FAR_MIN_PX = 17;

export interface RowGeom {
  label: string;
  value: string;
  level: Level;
  y: number;
}

/** A card's text cut to its width, and where each line sits. */
export interface CardGeom {
  w: number;
  h: number;
  spec: CardSpec;
  tag?: string;
  tagY: number;
  title: string;
  titleY: number;
  subtitle?: string;
  subY: number;
  rows: RowGeom[];
  wasteY?: number;
  wasteText?: string;
  ratioText?: string;
  tooltip: string;
  /** Overview text for low zoom: the title and one figure, in large type. */
  farTitle: string;
  farTitlePx: number;
  farDetail?: string;
  farLevel: Level;
  decoration?: CardDecoration;
}

/** What a caller adds to a node's card: the comparison marks a card changed, added or removed. */
export interface CardDecoration {
  /** A class on the card's group, for the stylesheet. */
  className?: string;
  /** A word shown above the title, before the card's own tag. */
  tag?: string;
  /** Rows drawn after the card's own. */
  rows?: CardRow[];
  /** Words appended to the card's accessible name. */
  label?: string;
}

/** Computes a card's size and its text lines cut to fit. */
export function computeGeom(node: PlanNode, plan: Plan, ms: Measurer, hasBadge: boolean, forceWidth?: number, decoration?: CardDecoration): CardGeom {
  const spec = decorated(cardSpec(node, plan), decoration);
  const f = ms.fonts;
  const badgeW = hasBadge ? 22 : 0;
  const labelGap = 12;
  let want = MIN_W;
  want = Math.max(want, ms.width(spec.title, f.title) + 2 * PAD_X + badgeW);
  if (spec.subtitle) want = Math.max(want, ms.width(spec.subtitle, f.body) + 2 * PAD_X);
  if (spec.tag) want = Math.max(want, ms.width(spec.tag, f.small) + 2 * PAD_X);
  const valueFont = (level: Level): string => (level === 'bad' || level === 'warn' ? f.bodyBold : f.body);
  for (const r of spec.rows) want = Math.max(want, ms.width(r.label, f.body) + labelGap + ms.width(r.value, valueFont(r.level)) + 2 * PAD_X);
  let ratioText: string | undefined;
  let wasteText: string | undefined;
  if (spec.waste) {
    ratioText = formatRatio(spec.waste.ratio);
    wasteText = spec.waste.text;
    want = Math.max(want, ms.width(wasteText, f.bodyBold) + labelGap + ms.width(ratioText, f.title) + 2 * PAD_X);
  }
  const w = Math.ceil(forceWidth ?? Math.min(MAX_W, want));
  const inner = w - 2 * PAD_X;
  let y = HEAT_BAR_H + 2;
  let tagY = 0;
  if (spec.tag) {
    tagY = y + FONT_PX.small + 1;
    y = tagY + 2;
  }
  const titleY = y + FONT_PX.title + 3;
  y = titleY;
  let subY = 0;
  if (spec.subtitle) {
    subY = y + FONT_PX.body + 4;
    y = subY;
  }
  y += 4;
  const rows: RowGeom[] = [];
  for (const r of spec.rows) {
    y += ROW_H;
    const lw = ms.width(r.label, f.body);
    const value = ms.fit(r.value, valueFont(r.level), Math.max(30, inner - lw - labelGap));
    const label = lw > inner - 40 ? ms.fit(r.label, f.body, inner - 40) : r.label;
    rows.push({ label, value, level: r.level, y });
  }
  let wasteY: number | undefined;
  if (spec.waste) {
    y += 6;
    wasteY = y;
    y += WASTE_H;
    wasteText = ms.fit(`${wasteText}`, f.bodyBold, inner - ms.width(ratioText!, f.title) - labelGap);
  }
  // The fold toggle sits on the bottom edge: a card with children keeps its last line clear of it.
  const h = Math.ceil(y + (node.children.length > 0 ? 14 : 8));
  const farFont = `700 ${FAR_TITLE_PX}px ${f.title.replace(/^\d+ \d+px /, '')}`;
  const farDetailFont = `600 ${FAR_DETAIL_PX}px ${f.title.replace(/^\d+ \d+px /, '')}`;
  let farDetail: string | undefined;
  let farLevel: Level;
  if (spec.waste && spec.waste.level !== 'muted') {
    farDetail = `${ratioText} ${spec.waste.unit === 'rows' ? 'read/kept' : 'read/returned'}`;
    farLevel = spec.waste.level;
  } else {
    // PostgreSQL: where the time went; MongoDB: how many documents flowed (its times are estimates).
    const returned = spec.rows.find((r) => r.label === 'returned');
    const pick = spec.rows.find((r) => r.label === 'own time') ?? spec.rows[0];
    if (returned) farDetail = `${returned.value} returned`;
    else if (pick) {
      farDetail = pick.value;
      farLevel = pick.level;
    }
  }
  const geom: CardGeom = {
    w,
    h,
    spec,
    tagY,
    title: ms.fit(spec.title, f.title, inner - badgeW),
    titleY,
    subY,
    rows,
    tooltip: [node.label, spec.subtitle].filter(Boolean).join('\n'),
    farTitle: spec.title,
    farTitlePx: FAR_TITLE_PX,
    farLevel,
  };
  // A long title shrinks before it is cut: at overview zoom the kind is the whole message.
  const titleW = ms.width(spec.title, farFont);
  if (titleW > w - 2 * PAD_X) {
    const px = Math.max(FAR_MIN_PX, Math.floor((FAR_TITLE_PX * (w - 2 * PAD_X)) / titleW));
    geom.farTitlePx = px;
    geom.farTitle = ms.fit(spec.title, farFont.replace(`${FAR_TITLE_PX}px`, `${px}px`), w - 2 * PAD_X);
  }
  if (farDetail !== undefined && h >= 54) geom.farDetail = ms.fit(farDetail, farDetailFont, w - 2 * PAD_X);
  if (spec.tag) geom.tag = ms.fit(spec.tag, f.small, inner);
  if (decoration) geom.decoration = decoration;
  if (spec.subtitle) geom.subtitle = ms.fit(spec.subtitle, f.body, inner);
  if (wasteY !== undefined) {
    geom.wasteY = wasteY;
    geom.wasteText = wasteText!;
    geom.ratioText = ratioText!;
  }
  return geom;
}

function decorated(spec: CardSpec, d: CardDecoration | undefined): CardSpec {
  if (!d) return spec;
  const out: CardSpec = { ...spec, rows: d.rows ? [...spec.rows, ...d.rows] : spec.rows };
  if (d.tag) out.tag = spec.tag ? `${d.tag} · ${spec.tag}` : d.tag;
  return out;
}


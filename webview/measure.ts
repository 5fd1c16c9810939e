// Text measurement for card sizing. SVG text does not wrap or report its size before it is laid out,
// so cards are sized from a canvas context using the same font the stylesheet gives the SVG text.

export interface Fonts {
  title: string;
  body: string;
  /** Body text at the weight the stylesheet gives warnings. */
  bodyBold: string;
  small: string;
}

/** Font sizes in px; the stylesheet uses the same numbers for the SVG classes. */
export const FONT_PX = { title: 12, body: 11, small: 10 } as const;

export class Measurer {
  private readonly ctx: CanvasRenderingContext2D | null;
  private readonly cache = new Map<string, number>();
  readonly fonts: Fonts;

  constructor(family: string) {
    const canvas = document.createElement('canvas');
    this.ctx = canvas.getContext('2d');
    const fam = family.trim() || 'sans-serif';
    this.fonts = {
      title: `600 ${FONT_PX.title}px ${fam}`,
      body: `${FONT_PX.body}px ${fam}`,
      bodyBold: `600 ${FONT_PX.body}px ${fam}`,
      small: `${FONT_PX.small}px ${fam}`,
    };
  }

  width(text: string, font: string): number {
    const key = `${font}\u0000${text}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let w: number;
    if (this.ctx) {
      this.ctx.font = font;
      w = this.ctx.measureText(text).width;
    } else {
      // No canvas (should not happen in a browser): a generous estimate keeps text inside the card.
      w = text.length * (parseFloat(font.replace(/^\d+ /, '')) || 11) * 0.62;
    }
    if (this.cache.size > 20_000) this.cache.clear();
    this.cache.set(key, w);
    return w;
  }

  /** The text cut with an ellipsis so it fits in `max` px. */
  fit(text: string, font: string, max: number): string {
    if (this.width(text, font) <= max) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.width(`${text.slice(0, mid)}…`, font) <= max) lo = mid;
      else hi = mid - 1;
    }
    return `${text.slice(0, lo)}…`;
  }
}

// Small DOM helpers. Every piece of plan text reaches the page through `textContent` here or d3's
// `.text()`: the plan comes from a database and may hold markup that must stay inert.

/** Creates an element with an optional class list and text content. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Appends children to a parent and returns the parent. */
export function append(parent: Element, ...children: (Node | null | undefined | false)[]): Element {
  for (const c of children) if (c) parent.appendChild(c);
  return parent;
}

/**
 * Lays the page out now rather than in the next frame. After a message has changed the page, the wait
 * for the next frame is idle time: laid out in it, the frame only paints. One layout either way, as
 * long as nothing writes to the page after it.
 */
export function layOutNow(): void {
  void document.documentElement.getBoundingClientRect();
}

/** Removes all children. */
export function clear(e: Element): void {
  while (e.firstChild) e.removeChild(e.firstChild);
}

/** A button with a text label; `title` becomes the tooltip. */
export function button(label: string, className: string, onClick: (ev: MouseEvent) => void, title?: string): HTMLButtonElement {
  const b = el('button', className, label);
  b.type = 'button';
  if (title) b.title = title;
  b.addEventListener('click', onClick);
  return b;
}

/** Builds a two-column definition table from label/value pairs, skipping empty values. */
export function factTable(rows: [string, string | undefined][], className = 'facts'): HTMLTableElement {
  const t = el('table', className);
  const body = el('tbody');
  for (const [k, v] of rows) {
    if (v === undefined || v === '') continue;
    const tr = el('tr');
    append(tr, el('th', undefined, k), el('td', undefined, v));
    body.appendChild(tr);
  }
  t.appendChild(body);
  return t;
}

/** Makes an element act as a button: focusable, announced as one, run by a click, Enter or Space. */
export function activatable(e: HTMLElement, go: () => void): void {
  e.tabIndex = 0;
  e.setAttribute('role', 'button');
  e.addEventListener('click', go);
  e.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      go();
    }
  });
}

// The import graph of a folder's modules, and its circles: what core-cycles.test.ts and
// extension-cycles.test.ts check. Type imports count: a circle of types still means two modules that can
// only be read, tested and moved together.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Every .ts file under a folder. */
export function sources(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/**
 * Each module's relative imports and re-exports, resolved to files among `files`. With `dynamic`, an
 * `import('./x')` counts too: a module loaded later is still one the importer cannot be read without.
 */
export function importGraph(files: string[], options: { dynamic?: boolean } = {}): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps: string[] = [];
    const text = readFileSync(f, 'utf8');
    const specifiers = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)].map((m) => m[1]!);
    if (options.dynamic) specifiers.push(...[...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => m[1]!));
    for (const specifier of specifiers) {
      const base = resolve(dirname(f), specifier);
      const hit = [`${base}.ts`, join(base, 'index.ts')].find((c) => files.includes(c));
      if (hit && !deps.includes(hit)) deps.push(hit);
    }
    graph.set(f, deps);
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan's algorithm, iterative enough for this size). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

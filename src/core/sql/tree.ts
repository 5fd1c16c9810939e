// One walk over a JSON-like syntax tree (libpg-query's parse tree, Babel's), for every reader that looks
// for nodes anywhere in it.

/** Calls `visit` on every object of the tree (depth first, without recursion, so deep trees cannot overflow). */
export function forEachNode(tree: unknown, visit: (node: Record<string, unknown>) => void): void {
  someNode(tree, (node) => {
    visit(node);
    return false;
  });
}

/** True when some object of the tree passes `test`; stops at the first (same order as forEachNode). */
export function someNode(tree: unknown, test: (node: Record<string, unknown>) => boolean): boolean {
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const x = stack.pop();
    if (Array.isArray(x)) {
      stack.push(...x);
      continue;
    }
    if (typeof x !== 'object' || x === null) continue;
    const o = x as Record<string, unknown>;
    if (test(o)) return true;
    for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
  return false;
}

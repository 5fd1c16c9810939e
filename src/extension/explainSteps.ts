// Where the time of one Explain went, as the Output log prints it (without the editor API, unit-tested in
// Node): from the click to the panel, step by step, so a slow first Explain shows which step was slow.
// The plan is shown as soon as it exists; the advice (index lists, bounded counts) and the measurement
// come after it, each logged as its own line.

/**
 * The steps of an Explain in the order they run; absent ones were not timed (a plan opened from a file).
 * `prepare` is what comes between the query found and the explain sent: the panel opened, the values and
 * the connection asked for when they are not known, the password read, the adapters loaded.
 */
export const EXPLAIN_STEPS = ['find', 'prepare', 'connect', 'explain', 'analyse', 'render', 'advise', 'measure'] as const;
export type ExplainStep = (typeof EXPLAIN_STEPS)[number];

/** "find 2 ms, connect 41 ms, explain 120 ms, ... (total 190 ms)": each step rounded, in running order. */
export function stepsLine(steps: Partial<Record<ExplainStep, number>>): string {
  const parts: string[] = [];
  let total = 0;
  for (const step of EXPLAIN_STEPS) {
    const ms = steps[step];
    if (ms === undefined || !Number.isFinite(ms)) continue;
    total += ms;
    parts.push(`${step} ${Math.round(ms).toLocaleString('en-US')} ms`);
  }
  return `${parts.join(', ')} (total ${Math.round(total).toLocaleString('en-US')} ms)`;
}

/** "statement read 1.2 ms, BEGIN and side-effect check 2.9 ms, ...": an explain's own parts, to a tenth of a millisecond. */
export function phasesLine(phases: readonly { label: string; ms: number }[]): string {
  return phases.map((p) => `${p.label} ${p.ms.toFixed(1)} ms`).join(', ');
}

// What the waivers of the lock and the inline `qpi-ignore` comments make of one finding of one query.
// One rule for every face that shows findings: the gate (policy.ts) suppresses what they cover, and the
// language server shows the same findings as waived, ignored or with an expired waiver.

import type { InlineIgnore } from './collect';
import type { Lock, Waiver } from './lock';

/** How a finding is covered: by a `qpi-ignore` comment (read first, as the gate reads it) or a waiver in force. */
export type Cover = { by: 'ignore'; ignore: InlineIgnore } | { by: 'waiver'; waiver: Waiver };

/** The lock's waivers of one query (by its key). */
export function waiversOf(lock: Lock | undefined, key: string): Waiver[] {
  return (lock?.waivers ?? []).filter((w) => w.query === key);
}

/** Whether a waiver names a rule (`*` names every rule). */
function names(rule: string, named: string): boolean {
  return named === rule || named === '*';
}

/**
 * What covers a finding of `rule`: the query's `qpi-ignore` comments, else a waiver that holds on
 * `today` (YYYY-MM-DD; a waiver holds through its expiry day).
 */
export function coverOf(rule: string, ignores: readonly InlineIgnore[], waivers: readonly Waiver[], today: string): Cover | undefined {
  const ignore = ignores.find((i) => names(rule, i.rule));
  if (ignore) return { by: 'ignore', ignore };
  const waiver = waivers.find((w) => names(rule, w.rule) && w.expires >= today);
  if (waiver) return { by: 'waiver', waiver };
  return undefined;
}

/** The waivers past their expiry day: each fails the gate until someone renews it or fixes the query. */
export function expiredOf(waivers: readonly Waiver[], today: string): Waiver[] {
  return waivers.filter((w) => w.expires < today);
}

/** The justification code scanning shows beside a suppressed result, and the editor beside a waived finding. */
export function coverJustification(c: Cover): string {
  if (c.by === 'ignore') return c.ignore.reason || 'qpi-ignore without a reason';
  return `Waived in the lock until ${c.waiver.expires} by ${c.waiver.owner}: ${c.waiver.reason}`;
}

/** The sentence of an expired waiver, as the gate's `qpi.check.waiver-expired` says it. */
export function expiredSentence(w: Waiver): string {
  return `The waiver of ${w.rule === '*' ? 'every rule' : w.rule} on this query expired on ${w.expires} (${w.owner}: ${w.reason}).`;
}

// What the language server is told about a plan from a background explain: read from the plan model
// here, so no plan crosses to the server. No editor API: unit tests run it on real explain outputs.

import type { Plan } from '../core/index';
import type { PlanSummary } from '../protocol/languageServer';

/** The stages of the winning plan, a full scan, an in-memory sort, and the indexes read. */
export function summarize(plan: Plan): PlanSummary {
  const stages: string[] = [];
  const indexes: string[] = [];
  let fullScan: string | undefined;
  let blockingSort = false;
  for (const n of plan.nodes) {
    stages.push(n.kind);
    if (n.kind === 'COLLSCAN') fullScan ??= plan.mongo?.namespace?.split('.').slice(1).join('.') || 'collection';
    if (n.kind === 'Seq Scan') fullScan ??= n.details.relationName ?? 'table';
    if (n.kind === 'SORT' || n.kind === 'Sort' || n.kind === '$sort') blockingSort = true;
    if (n.details.indexName !== undefined && !indexes.includes(n.details.indexName)) indexes.push(n.details.indexName);
  }
  const s: PlanSummary = { stages, blockingSort, indexes };
  if (fullScan !== undefined) s.fullScan = fullScan;
  return s;
}

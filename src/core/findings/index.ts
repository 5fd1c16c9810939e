// Placeholder until the findings land (issue 2).
import type { Finding, Plan } from '../model';
export function analyze(_plan: Plan): Finding[] {
  return [];
}

// qpi.config.json: the nearest one above each checked file applies to it, so each package of a monorepo
// can have its own; --config names one for every file.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CheckRules, DiagnosticCodes, GATED_COUNTERS, RULES, type CheckConfig } from '../../core/index';

export const CONFIG_NAME = 'qpi.config.json';

/** Every rule id a configuration may name: the gate's own and the editor's. */
const KNOWN_RULES = new Set<string>([...RULES.keys(), ...Object.values(DiagnosticCodes), ...Object.values(CheckRules)]);

/** A configuration file's text as a CheckConfig, or the sentence saying what is wrong with it. */
export function parseConfig(text: string, path: string): CheckConfig | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return `${path} is not JSON: ${err instanceof Error ? err.message : String(err)}.`;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return `${path} is not a JSON object.`;
  const d = doc as Record<string, unknown>;
  const unknownKeys = Object.keys(d).filter((k) => !['rules', 'ignore', 'queries', '$schema', '//'].includes(k));
  if (unknownKeys.length > 0) return `${path} has ${unknownKeys.map((k) => `"${k}"`).join(', ')}, which qpi check does not read (it reads "rules", "ignore" and "queries").`;
  const top = rulesAndIgnores(d, path, '');
  if (top) return top;
  if (d.queries !== undefined) {
    if (typeof d.queries !== 'object' || d.queries === null || Array.isArray(d.queries)) return `${path}: "queries" must be an object of query selectors.`;
    for (const [selector, q] of Object.entries(d.queries as Record<string, unknown>)) {
      if (selector.trim() === '') return `${path}: a selector in "queries" is empty.`;
      if (typeof q !== 'object' || q === null || Array.isArray(q)) return `${path}: queries["${selector}"] must be an object with "rules" and/or "ignore".`;
      const extra = Object.keys(q).filter((k) => k !== 'rules' && k !== 'ignore');
      if (extra.length > 0) return `${path}: queries["${selector}"] has ${extra.map((k) => `"${k}"`).join(', ')}; a query's entry reads "rules" and "ignore".`;
      const problem = rulesAndIgnores(q as Record<string, unknown>, path, `queries["${selector}"].`);
      if (problem) return problem;
    }
  }
  return d as CheckConfig;
}

/** The `rules` and `ignore` of a configuration or of one of its query entries, checked. */
function rulesAndIgnores(d: Record<string, unknown>, path: string, at: string): string | undefined {
  if (d.ignore !== undefined) {
    if (!Array.isArray(d.ignore) || d.ignore.some((x) => typeof x !== 'string')) return `${path}: "${at}ignore" must be a list of rule ids.`;
    const unknown = (d.ignore as string[]).find((id) => !KNOWN_RULES.has(id));
    if (unknown !== undefined) return unknownRule(path, `${at}ignore`, unknown);
  }
  if (d.rules === undefined) return undefined;
  if (typeof d.rules !== 'object' || d.rules === null || Array.isArray(d.rules)) return `${path}: "${at}rules" must be an object of rule ids.`;
  for (const [id, r] of Object.entries(d.rules as Record<string, unknown>)) {
    if (!KNOWN_RULES.has(id)) return unknownRule(path, `${at}rules`, id);
    const rc = r as Record<string, unknown> | null;
    if (typeof rc !== 'object' || rc === null || Array.isArray(rc)) return `${path}: the rule ${at}${id} must be an object.`;
    const extra = Object.keys(rc).filter((k) => !['fail', 'level', 'threshold'].includes(k));
    if (extra.length > 0) return `${path}: ${at}${id} has ${extra.map((k) => `"${k}"`).join(', ')}; a rule reads "fail", "level" and "threshold".`;
    if (rc.fail !== undefined && typeof rc.fail !== 'boolean') return `${path}: ${at}${id}.fail must be true or false.`;
    if (rc.level !== undefined && !['error', 'warning', 'note'].includes(rc.level as string)) return `${path}: ${at}${id}.level must be error, warning or note.`;
    if (rc.threshold !== undefined) {
      if (id !== CheckRules.countersWorse) return `${path}: ${at}${id}.threshold is read by no rule but ${CheckRules.countersWorse}.`;
      const bad = `${path}: ${at}${id}.threshold must be a fraction from 0 (0.1 is 10%), or an object of counters (${GATED_COUNTERS.join(', ')}) to fractions.`;
      if (typeof rc.threshold === 'object' && rc.threshold !== null && !Array.isArray(rc.threshold)) {
        for (const [name, v] of Object.entries(rc.threshold)) {
          if (!(GATED_COUNTERS as readonly string[]).includes(name) || typeof v !== 'number' || !(v >= 0)) return bad;
        }
      } else if (typeof rc.threshold !== 'number' || !(rc.threshold >= 0)) return bad;
    }
  }
  return undefined;
}

function unknownRule(path: string, at: string, id: string): string {
  return `${path}: ${at} names "${id}", which is no rule of qpi check (the rules are listed in docs/ci.md).`;
}

/** The configuration of each file: the nearest qpi.config.json above it, each read once. */
export class Configs {
  private readonly byDir = new Map<string, { config: CheckConfig; path?: string }>();
  private readonly problems: string[] = [];

  /** `root` is the lock's folder: a configuration's selectors are read relative to its own folder below it. */
  constructor(private readonly root: string, private readonly given?: { config: CheckConfig; path: string }) {}

  /** Sentences about configuration files that could not be read. */
  get errors(): readonly string[] {
    return this.problems;
  }

  forFile(absFile: string): CheckConfig {
    if (this.given) return { ...this.given.config, base: this.baseOf(this.given.path) };
    return this.forDir(dirname(resolve(absFile))).config;
  }

  private baseOf(configPath: string): string {
    const b = relative(this.root, dirname(resolve(configPath))).split(sep).join('/');
    return b.startsWith('..') ? '' : b;
  }

  private forDir(dir: string): { config: CheckConfig; path?: string } {
    const hit = this.byDir.get(dir);
    if (hit) return hit;
    const here = join(dir, CONFIG_NAME);
    let found: { config: CheckConfig; path?: string };
    if (existsSync(here)) {
      const parsed = parseConfig(readFileSync(here, 'utf8'), here);
      if (typeof parsed === 'string') {
        this.problems.push(parsed);
        found = { config: {} };
      } else found = { config: { ...parsed, base: this.baseOf(here) }, path: here };
    } else {
      const parent = dirname(dir);
      found = parent === dir ? { config: {} } : this.forDir(parent);
    }
    this.byDir.set(dir, found);
    return found;
  }
}

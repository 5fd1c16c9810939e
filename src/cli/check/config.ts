// qpi.config.json: the nearest one above each checked file applies to it, so each package of a monorepo
// can have its own; --config names one for every file.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CheckConfig } from '../../core/index';

export const CONFIG_NAME = 'qpi.config.json';

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
  const unknownKeys = Object.keys(d).filter((k) => !['rules', 'ignore', '$schema', '//'].includes(k));
  if (unknownKeys.length > 0) return `${path} has ${unknownKeys.map((k) => `"${k}"`).join(', ')}, which qpi check does not read (it reads "rules" and "ignore").`;
  if (d.ignore !== undefined && (!Array.isArray(d.ignore) || d.ignore.some((x) => typeof x !== 'string'))) return `${path}: "ignore" must be a list of rule ids.`;
  if (d.rules !== undefined) {
    if (typeof d.rules !== 'object' || d.rules === null || Array.isArray(d.rules)) return `${path}: "rules" must be an object of rule ids.`;
    for (const [id, r] of Object.entries(d.rules as Record<string, unknown>)) {
      const rc = r as Record<string, unknown> | null;
      if (typeof rc !== 'object' || rc === null) return `${path}: the rule ${id} must be an object.`;
      if (rc.fail !== undefined && typeof rc.fail !== 'boolean') return `${path}: ${id}.fail must be true or false.`;
      if (rc.level !== undefined && !['error', 'warning', 'note'].includes(rc.level as string)) return `${path}: ${id}.level must be error, warning or note.`;
      if (rc.threshold !== undefined && (typeof rc.threshold !== 'number' || !(rc.threshold >= 0))) return `${path}: ${id}.threshold must be a number from 0 (0.1 is 10%).`;
    }
  }
  return d as CheckConfig;
}

/** The configuration of each file: the nearest qpi.config.json above it, each read once. */
export class Configs {
  private readonly byDir = new Map<string, { config: CheckConfig; path?: string }>();
  private readonly problems: string[] = [];

  constructor(private readonly given?: { config: CheckConfig; path: string }) {}

  /** Sentences about configuration files that could not be read. */
  get errors(): readonly string[] {
    return this.problems;
  }

  forFile(absFile: string): CheckConfig {
    if (this.given) return this.given.config;
    return this.forDir(dirname(resolve(absFile))).config;
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
      } else found = { config: parsed, path: here };
    } else {
      const parent = dirname(dir);
      found = parent === dir ? { config: {} } : this.forDir(parent);
    }
    this.byDir.set(dir, found);
    return found;
  }
}

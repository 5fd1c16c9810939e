// `qpi check merge`: the outputs of the shards of one run (`--shard i/n` on a CI matrix) joined into the
// outputs one run would have written. Deterministic: the same inputs in any order give the same bytes.
// `--json` documents carry every query's verdict, so they give every format again; SARIF, JUnit and lock
// files are also joined directly, for pipelines that keep only those. Text in, text out.

import { XMLParser } from 'fast-xml-parser';
import { canonicalJson, parseLock, serializeLock, type Lock, type LockEntry, type Waiver } from './lock';
import { gateCounts, toJsonDocument, decisionFromJson, type CheckJson } from './report';

export type Merged = { ok: true; text: string } | { ok: false; error: string };

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether a parsed JSON value is a `qpi check --json` document. */
export function isCheckJson(doc: unknown): doc is CheckJson {
  const d = doc as Partial<CheckJson> | null;
  return d !== null && typeof d === 'object' && d.schemaVersion === 1 && Array.isArray(d.queries);
}

/** Environments joined engine by engine; two versions of one engine are an error: the shards ran on different servers. */
function mergeEnvironments(envs: readonly Lock['environment'][]): Lock['environment'] | string {
  const out: Lock['environment'] = {};
  for (const e of envs) {
    for (const engine of ['mongodb', 'postgres'] as const) {
      const x = e[engine];
      if (!x) continue;
      const had = out[engine];
      if (had && had.server !== x.server) return `The inputs were written on two ${engine === 'mongodb' ? 'MongoDB' : 'PostgreSQL'} versions, ${had.server} and ${x.server}: the shards of one run must use one server version.`;
      out[engine] = x;
    }
  }
  return out;
}

function mergeWaivers(lists: readonly Waiver[][]): Waiver[] {
  const byText = new Map<string, Waiver>();
  for (const l of lists) for (const w of l) byText.set(canonicalJson(w), w);
  return [...byText.values()].sort((a, b) => cmp(a.query, b.query) || cmp(a.rule, b.rule) || cmp(a.expires, b.expires) || cmp(a.owner, b.owner));
}

/** `--json` documents joined: every query once, in file and line order, counts and the verdict computed again. */
export function mergeJsonDocuments(docs: readonly CheckJson[]): { ok: true; doc: CheckJson } | { ok: false; error: string } {
  const byKey = new Map<string, CheckJson['queries'][number]>();
  for (const d of docs) {
    for (const q of d.queries) {
      const had = byKey.get(q.key);
      if (had && canonicalJson(had) !== canonicalJson(q)) return { ok: false, error: `The query ${q.key} is in two inputs with different results: were they written by shards of one run?` };
      byKey.set(q.key, q);
    }
  }
  const environment = mergeEnvironments(docs.map((d) => d.environment ?? {}));
  if (typeof environment === 'string') return { ok: false, error: environment };
  const queries = [...byKey.values()].sort((a, b) => cmp(a.file, b.file) || a.line - b.line || a.column - b.column || cmp(a.key, b.key));
  const expiredWaivers = mergeWaivers(docs.map((d) => d.expiredWaivers ?? []));
  const passed = expiredWaivers.length === 0 && queries.every((q) => q.outcome !== 'failed');
  const decision = decisionFromJson({ schemaVersion: 1, passed, exitCode: 0, counts: { queries: 0, explained: 0, notExplainable: 0, failed: 0, passed: 0, waivedOrIgnored: 0, byTier: { structural: 0, statistical: 0, measured: 0 } }, environment, expiredWaivers, queries });
  const doc = toJsonDocument(decision, passed ? 0 : 3, environment);
  doc.counts = gateCounts(decision);
  return { ok: true, doc };
}

/**
 * Lock files joined: every query of every input (a shard's lock holds its own part), one entry per key
 * (the same key with two different entries is an error), the waivers of all of them once.
 */
export function mergeLocks(texts: readonly { name: string; text: string }[]): Merged {
  const queries: Record<string, LockEntry> = {};
  const envs: Lock['environment'][] = [];
  const waivers: Waiver[][] = [];
  for (const t of texts) {
    const parsed = parseLock(t.text);
    if (!parsed.ok) return { ok: false, error: `${t.name}: ${parsed.error}` };
    for (const [k, e] of Object.entries(parsed.lock.queries)) {
      if (queries[k] && canonicalJson(queries[k]) !== canonicalJson(e)) return { ok: false, error: `The query ${k} has two different entries (${t.name} and an input before it): were the locks written by shards of one run?` };
      queries[k] = e;
    }
    envs.push(parsed.lock.environment);
    waivers.push(parsed.lock.waivers);
  }
  const environment = mergeEnvironments(envs);
  if (typeof environment === 'string') return { ok: false, error: environment };
  return { ok: true, text: serializeLock({ version: 1, environment, queries, waivers: mergeWaivers(waivers) }) };
}

interface SarifRun {
  tool: { driver: { name: string; rules?: { id: string }[] } & Record<string, unknown> };
  automationDetails?: { id?: string };
  results?: (Record<string, unknown> & { ruleId?: string; ruleIndex?: number })[];
  [k: string]: unknown;
}

/**
 * SARIF logs joined: the runs of one tool and category become one run, with every rule once (sorted by id,
 * `ruleIndex` numbered again) and the results in file, line, rule and fingerprint order.
 */
export function mergeSarif(texts: readonly { name: string; text: string }[]): Merged {
  const groups = new Map<string, SarifRun[]>();
  let schema: unknown;
  for (const t of texts) {
    let log: { $schema?: unknown; version?: unknown; runs?: SarifRun[] };
    try {
      log = JSON.parse(t.text) as typeof log;
    } catch (err) {
      return { ok: false, error: `${t.name} is not JSON: ${err instanceof Error ? err.message : String(err)}.` };
    }
    if (log.version !== '2.1.0' || !Array.isArray(log.runs)) return { ok: false, error: `${t.name} is not a SARIF 2.1.0 log.` };
    schema ??= log.$schema;
    for (const run of log.runs) {
      const id = `${run.tool?.driver?.name ?? ''}\u0000${run.automationDetails?.id ?? ''}`;
      groups.set(id, [...(groups.get(id) ?? []), run]);
    }
  }
  const runs: SarifRun[] = [];
  for (const id of [...groups.keys()].sort(cmp)) {
    const group = groups.get(id)!;
    const rules = new Map<string, { id: string }>();
    for (const run of group) for (const r of run.tool.driver.rules ?? []) if (!rules.has(r.id)) rules.set(r.id, r);
    const ids = [...rules.keys()].sort(cmp);
    const index = new Map(ids.map((x, i) => [x, i]));
    const seen = new Set<string>();
    const results: Record<string, unknown>[] = [];
    for (const run of group) {
      for (const r of run.results ?? []) {
        const copy = { ...r, ...(r.ruleId !== undefined && index.has(r.ruleId) ? { ruleIndex: index.get(r.ruleId) } : {}) };
        const text = canonicalJson(copy);
        if (seen.has(text)) continue;
        seen.add(text);
        results.push(copy);
      }
    }
    results.sort((a, b) => cmp(resultOrder(a), resultOrder(b)) || cmp(canonicalJson(a), canonicalJson(b)));
    const first = group[0]!;
    runs.push({ ...first, tool: { ...first.tool, driver: { ...first.tool.driver, rules: ids.map((x) => rules.get(x)!) } }, results });
  }
  return { ok: true, text: `${JSON.stringify({ $schema: schema ?? 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs }, null, 2)}\n` };
}

function resultOrder(r: Record<string, unknown>): string {
  const loc = (r.locations as { physicalLocation?: { artifactLocation?: { uri?: string }; region?: { startLine?: number; startColumn?: number } } }[] | undefined)?.[0]?.physicalLocation;
  const line = String(loc?.region?.startLine ?? 0).padStart(9, '0');
  const column = String(loc?.region?.startColumn ?? 0).padStart(9, '0');
  const print = (r.partialFingerprints as { primaryLocationLineHash?: string } | undefined)?.primaryLocationLineHash ?? '';
  return `${loc?.artifactLocation?.uri ?? ''}\u0000${line}\u0000${column}\u0000${String(r.ruleId ?? '')}\u0000${print}`;
}

type XmlNode = Record<string, unknown>;

/**
 * JUnit XML files joined: test suites of one name become one, test cases in line and name order, every
 * count computed again from the cases.
 */
export function mergeJunit(texts: readonly { name: string; text: string }[]): Merged {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseAttributeValue: false, parseTagValue: false, trimValues: true, isArray: (name) => name !== 'testsuites' });
  const suites = new Map<string, XmlNode[]>();
  let name = 'qpi check';
  for (const t of texts) {
    let doc: { testsuites?: XmlNode[] | XmlNode };
    try {
      doc = parser.parse(t.text) as typeof doc;
    } catch (err) {
      return { ok: false, error: `${t.name} is not XML: ${err instanceof Error ? err.message : String(err)}.` };
    }
    const root = Array.isArray(doc.testsuites) ? doc.testsuites[0] : doc.testsuites;
    if (!root) return { ok: false, error: `${t.name} is not a JUnit report (no <testsuites>).` };
    if (typeof root['@_name'] === 'string') name = root['@_name'];
    for (const s of (root['testsuite'] as XmlNode[] | undefined) ?? []) {
      const n = String(s['@_name'] ?? '');
      suites.set(n, [...(suites.get(n) ?? []), ...((s['testcase'] as XmlNode[] | undefined) ?? [])]);
    }
  }
  let tests = 0;
  let failures = 0;
  let skipped = 0;
  const body: string[] = [];
  for (const suite of [...suites.keys()].sort(cmp)) {
    const seen = new Set<string>();
    const cases = suites.get(suite)!.filter((c) => {
      const k = canonicalJson(c);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    }).sort((a, b) => Number(a['@_line'] ?? 0) - Number(b['@_line'] ?? 0) || cmp(String(a['@_name'] ?? ''), String(b['@_name'] ?? '')) || cmp(canonicalJson(a), canonicalJson(b)));
    const f = cases.filter((c) => c['failure'] !== undefined || c['error'] !== undefined).length;
    const s = cases.filter((c) => c['skipped'] !== undefined).length;
    tests += cases.length;
    failures += f;
    skipped += s;
    body.push(`  <testsuite name="${xml(suite)}" tests="${cases.length}" failures="${f}" skipped="${s}" errors="0">`);
    for (const c of cases) body.push(element('testcase', c, '    '));
    body.push('  </testsuite>');
  }
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="${xml(name)}" tests="${tests}" failures="${failures}" skipped="${skipped}" errors="0">`, ...body, '</testsuites>'];
  return { ok: true, text: `${lines.join('\n')}\n` };
}

/** One parsed element written back: attributes in their order, text, then child elements. */
function element(tag: string, node: unknown, indent: string): string {
  if (typeof node !== 'object' || node === null) return `${indent}<${tag}>${xml(String(node))}</${tag}>`;
  const o = node as XmlNode;
  const attrs = Object.keys(o).filter((k) => k.startsWith('@_')).map((k) => ` ${k.slice(2)}="${xml(String(o[k]))}"`).join('');
  const text = typeof o['#text'] === 'string' || typeof o['#text'] === 'number' ? xml(String(o['#text'])) : '';
  const children = Object.keys(o).filter((k) => !k.startsWith('@_') && k !== '#text').flatMap((k) => (Array.isArray(o[k]) ? (o[k] as unknown[]) : [o[k]]).map((c) => element(k, c, `${indent}  `)));
  if (children.length === 0 && text === '') return `${indent}<${tag}${attrs}/>`;
  if (children.length === 0) return `${indent}<${tag}${attrs}>${text}</${tag}>`;
  return `${indent}<${tag}${attrs}>${text}\n${children.join('\n')}\n${indent}</${tag}>`;
}

function xml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&apos;' })[c]!);
}

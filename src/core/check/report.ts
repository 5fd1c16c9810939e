// The gate's decision in the formats CI reads: SARIF 2.1.0 for code scanning, JUnit XML (one test case per
// query), a markdown summary for a pull request comment or a job summary, and the counts the terminal
// line and --json give. Text in, text out: the CLI writes the files.

import { fingerprintOf } from './identity';
import type { Lock, Waiver } from './lock';
import type { CheckMeasurement, GateDecision, GateResult, QueryRun, QueryVerdict } from './policy';
import { RULES, ruleInfo, type RuleInfo } from './rules';

export interface GateCounts {
  queries: number;
  explained: number;
  notExplainable: number;
  failed: number;
  passed: number;
  waivedOrIgnored: number;
  byTier: Record<'structural' | 'statistical' | 'measured', number>;
}

export function gateCounts(d: GateDecision): GateCounts {
  const byTier = { structural: 0, statistical: 0, measured: 0 };
  for (const v of d.verdicts) for (const r of v.results) byTier[r.tier]++;
  return {
    queries: d.verdicts.length,
    explained: d.verdicts.filter((v) => v.run.status === 'explained').length,
    notExplainable: d.verdicts.filter((v) => v.run.status === 'not-explainable').length,
    failed: d.verdicts.filter((v) => v.outcome === 'failed').length,
    passed: d.verdicts.filter((v) => v.outcome === 'passed').length,
    waivedOrIgnored: d.verdicts.reduce((n, v) => n + v.results.filter((r) => r.suppressed).length, 0),
    byTier,
  };
}

export interface SarifOptions {
  toolVersion: string;
  /** Where the rules are documented: each rule's helpUri is this with `#` and the rule id. */
  helpBase: string;
  /** The lock's path, repository-relative: where an expired waiver of a query no longer found is reported. */
  lockFile: string;
}

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

/** SARIF 2.1.0: one result per finding or regression of a query, at the query's own range. */
export function toSarif(d: GateDecision, opts: SarifOptions): string {
  const used = new Set<string>();
  for (const v of d.verdicts) for (const r of v.results) used.add(r.rule);
  if (d.expiredWaivers.length > 0) used.add('qpi.check.waiver-expired');
  // Every rule the gate knows is listed, so code scanning shows the same rule list on every run.
  const ids = [...new Set([...RULES.keys(), ...used])].sort();
  const index = new Map(ids.map((id, i) => [id, i]));
  const results: unknown[] = [];
  for (const v of d.verdicts) {
    for (const r of v.results) results.push(sarifResult(v, r, index.get(r.rule)!));
  }
  for (const w of d.expiredWaivers) {
    results.push({
      ruleId: 'qpi.check.waiver-expired',
      ruleIndex: index.get('qpi.check.waiver-expired'),
      level: 'error',
      message: { text: `The waiver of ${w.rule} on ${w.query} expired on ${w.expires} (${w.owner}: ${w.reason}); the query was not found.` },
      locations: [{ physicalLocation: { artifactLocation: { uri: opts.lockFile }, region: { startLine: 1, startColumn: 1 } } }],
      partialFingerprints: { primaryLocationLineHash: fingerprintOf(`waiver ${w.query}`, w.rule) },
      baselineState: 'unchanged',
    });
  }
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [{
      tool: {
        driver: {
          name: 'qpi check',
          fullName: 'Query Plan Inspector: qpi check',
          version: opts.toolVersion,
          semanticVersion: opts.toolVersion,
          informationUri: opts.helpBase,
          rules: ids.map((id) => sarifRule(ruleInfo(id), opts.helpBase)),
        },
      },
      automationDetails: { id: 'qpi-check/' },
      columnKind: 'utf16CodeUnits',
      results,
    }],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

function sarifRule(r: RuleInfo, helpBase: string): unknown {
  return {
    id: r.id,
    name: r.name,
    shortDescription: { text: r.short },
    fullDescription: { text: r.full },
    help: {
      text: `${r.full} ${r.help} Tier: ${r.tier}.`,
      markdown: `**${r.short}**\n\n${r.full}\n\n**Fix:** ${r.help}\n\n_Tier: ${r.tier} (${TIER_WORDS[r.tier]})._`,
    },
    helpUri: `${helpBase}#${r.id.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`,
    defaultConfiguration: { level: r.level },
    properties: {
      precision: r.precision,
      'problem.severity': r.level === 'error' ? 'error' : r.level === 'warning' ? 'warning' : 'recommendation',
      tags: ['performance', 'database', r.tier],
    },
  };
}

const TIER_WORDS = {
  structural: 'holds whatever the data',
  statistical: 'the planner\'s choice on the CI data',
  measured: 'counted by running the query',
} as const;

/**
 * `qpi check --measure`'s measured advice in one sentence: the measured first suggestion and its work
 * today and with it, whether it confirms the finding, or why nothing was measured.
 */
export function measurementSentence(m: CheckMeasurement): string {
  if (m.status === 'not-measured') return `Not measured: ${m.reason.replace(/\.$/, '')}.`;
  const what = m.action === 'create' ? `the index ${m.index}` : m.action === 'keep' ? `the existing index ${m.index} already serves the query` : 'no index does less work than today\'s plan';
  const figures = m.before && m.after ? ` (${m.unit}: ${m.before.text} today, ${m.after.text} with ${m.action === 'create' ? 'it' : 'the best candidate'})` : '';
  return `Measured ${m.label}: ${m.confirms ? 'confirmed by' : 'not confirmed:'} ${what}${figures}.`;
}

/** The measured advice as markdown: the sentence, and today's plan and the plan with the index. */
function measurementMarkdown(m: CheckMeasurement): string {
  if (m.status === 'not-measured' || !m.before || !m.after) return measurementSentence(m);
  return `${measurementSentence(m)}\n\n| | ${m.unit} | plan |\n|---|---|---|\n| today | ${cell(m.before.text)} | \`${cell(m.before.plan)}\` |\n| with ${m.action === 'create' ? `\`${cell(m.index)}\`` : 'the best candidate'} | ${cell(m.after.text)} | \`${cell(m.after.plan)}\` |`;
}

function sarifResult(v: QueryVerdict, r: GateResult, ruleIndex: number): unknown {
  const range = r.range;
  const related = r.related ?? [];
  // A related location is named in the message by its id, so code scanning links the text to the line.
  const cause = related.length > 0 ? ` Cause: ${related.map((p, i) => `[${p.message.replace(/[[\]]/g, '')}](${i + 1})`).join('; ')}.` : '';
  const measured = r.measured ? ` ${measurementSentence(r.measured)}` : '';
  const markdown = `${r.message}${cause}${r.suggestion ? `\n\n\`\`\`\n${r.suggestion}\n\`\`\`` : ''}${r.measured ? `\n\n${measurementMarkdown(r.measured)}` : ''}`;
  const out: Record<string, unknown> = {
    ruleId: r.rule,
    ruleIndex,
    level: r.level,
    message: { text: `${r.message}${cause}${r.suggestion && !r.message.includes(r.suggestion) ? ` Suggested: ${r.suggestion}` : ''}${measured}`, markdown },
    locations: [{
      physicalLocation: {
        artifactLocation: { uri: encodeURI(v.run.file) },
        region: { startLine: range.startLine, startColumn: range.startColumn, endLine: range.endLine, endColumn: range.endColumn },
      },
    }],
    partialFingerprints: { primaryLocationLineHash: fingerprintOf(v.run.key, r.rule) },
    baselineState: baselineOf(v, r),
    properties: { tier: r.tier, query: v.run.key, engine: v.run.engine, ...(v.run.signature ? { plan: v.run.signature.stages } : {}), ...(r.measured ? { measured: r.measured } : {}) },
  };
  if (related.length > 0) {
    out.relatedLocations = related.map((p, i) => ({
      id: i + 1,
      physicalLocation: { artifactLocation: { uri: encodeURI(p.file) }, region: { startLine: p.line, startColumn: p.column } },
      message: { text: p.message },
    }));
  }
  if (r.suppressed) out.suppressions = [{ kind: r.suppressed.kind, status: 'accepted', justification: r.suppressed.justification }];
  return out;
}

function baselineOf(v: QueryVerdict, r: GateResult): 'new' | 'unchanged' | 'updated' {
  if (!v.baseline) return 'new';
  if (r.rule.startsWith('qpi.check.')) return 'updated';
  return v.baseline.findings.includes(r.rule) ? 'unchanged' : 'new';
}

function xml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&apos;' })[c]!)
    // Characters XML 1.0 cannot hold at all.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '?');
}

/** JUnit XML: a suite per file, a test case per query; failed queries fail, not explainable ones are skipped. */
export function toJunit(d: GateDecision): string {
  const byFile = new Map<string, QueryVerdict[]>();
  for (const v of d.verdicts) byFile.set(v.run.file, [...(byFile.get(v.run.file) ?? []), v]);
  const c = gateCounts(d);
  const lines = [`<?xml version="1.0" encoding="UTF-8"?>`, `<testsuites name="qpi check" tests="${c.queries}" failures="${c.failed}" skipped="${c.notExplainable}" errors="0">`];
  for (const [file, vs] of [...byFile].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const failures = vs.filter((v) => v.outcome === 'failed').length;
    const skipped = vs.filter((v) => v.outcome === 'not-explainable').length;
    lines.push(`  <testsuite name="${xml(file)}" tests="${vs.length}" failures="${failures}" skipped="${skipped}" errors="0">`);
    for (const v of vs) {
      const name = `${v.run.title} (${v.run.engine}${v.run.scope ? `, ${v.run.scope}` : ''})`;
      const open = `    <testcase name="${xml(name)}" classname="${xml(file)}" file="${xml(file)}" line="${v.run.range.startLine}"`;
      const failing = v.results.filter((r) => r.fails);
      if (v.outcome === 'failed') {
        lines.push(`${open}>`);
        lines.push(`      <failure message="${xml(failing.map((r) => r.rule).join(', '))}" type="${xml(failing[0]!.rule)}">${xml(failing.map((r) => `${r.rule} (${r.tier}): ${r.message}${r.measured ? ` ${measurementSentence(r.measured)}` : ''}`).join('\n'))}</failure>`);
        lines.push(`      <system-out>${xml(v.run.key)}</system-out>`);
        lines.push('    </testcase>');
      } else if (v.outcome === 'not-explainable') {
        lines.push(`${open}>`, `      <skipped message="${xml(`not explainable: ${v.run.why ?? ''}`)}"/>`, '    </testcase>');
      } else lines.push(`${open}/>`);
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

/** GitHub's limit on a comment is 65,536 characters; the summary stays below this. */
export const MARKDOWN_LIMIT = 65_000;

/** A markdown summary: the verdict, counts, failed queries first, then the rest, cut to fit a PR comment. */
export function toMarkdown(d: GateDecision, limit = MARKDOWN_LIMIT): string {
  const c = gateCounts(d);
  const head = [
    `## qpi check: ${d.passed ? 'passed' : 'failed'}`,
    '',
    `${c.queries} queries: ${c.failed} failed, ${c.passed} passed, ${c.notExplainable} not explainable${c.waivedOrIgnored > 0 ? `, ${c.waivedOrIgnored} findings waived or ignored` : ''}. Findings by tier: ${c.byTier.structural} structural, ${c.byTier.statistical} statistical, ${c.byTier.measured} measured.`,
    '',
  ];
  const order = { failed: 0, passed: 1, 'not-explainable': 2 } as const;
  const sorted = [...d.verdicts].sort((a, b) => order[a.outcome] - order[b.outcome] || (a.run.file < b.run.file ? -1 : a.run.file > b.run.file ? 1 : a.run.range.startLine - b.run.range.startLine));
  const blocks: string[] = [];
  for (const w of d.expiredWaivers) blocks.push(`- :x: expired waiver of \`${cell(w.rule)}\` on \`${cell(w.query)}\` (${cell(w.owner)}, ${w.expires}): the query was not found`);
  for (const v of sorted) {
    const where = `\`${cell(v.run.file)}:${v.run.range.startLine}\``;
    const mark = v.outcome === 'failed' ? ':x:' : v.outcome === 'passed' ? ':white_check_mark:' : ':grey_question:';
    const lines = [`- ${mark} ${where} \`${cell(v.run.title)}\` (${v.run.engine}, ${v.baselineState})${v.run.status === 'not-explainable' ? `: not explainable: ${cell(v.run.why ?? '')}` : ''}`];
    for (const r of v.results) {
      if (v.outcome !== 'failed' && !r.suppressed && r.level === 'note') continue;
      lines.push(`  - ${r.fails ? '**fails**' : r.suppressed ? '_suppressed_' : r.level} \`${r.rule}\` (${r.tier}): ${cell(r.message)}${r.suppressed ? ` (${cell(r.suppressed.justification)})` : ''}`);
    }
    if (v.outcome === 'failed' && v.run.signature) lines.push(`  - plan: \`${cell(v.run.signature.stages)}\``);
    const m = v.outcome === 'failed' ? v.run.measurement : undefined;
    if (m?.status === 'measured') {
      lines.push(`  - measured advice (${cell(m.label)}): ${m.createIndex !== undefined ? `\`${cell(m.createIndex)}\`` : cell(m.index)}${m.confirms ? ', confirms the finding' : ', does not confirm the finding'}`);
      if (m.before && m.after) lines.push(`    - ${cell(m.unit)}: ${cell(m.before.text)} today (\`${cell(m.before.plan)}\`) -> ${cell(m.after.text)} with it (\`${cell(m.after.plan)}\`)`);
    } else if (m) lines.push(`  - not measured: ${cell(m.reason)}`);
    blocks.push(lines.join('\n'));
  }
  let out = head.join('\n');
  for (let i = 0; i < blocks.length; i++) {
    const more = `\n\n_…and ${blocks.length - i} more queries; see the SARIF, JUnit or --json output._\n`;
    if (out.length + blocks[i]!.length + 1 + more.length > limit) return out + more;
    out += `${blocks[i]}\n`;
  }
  return out;
}

function cell(s: string): string {
  return s.replace(/`/g, '\'').replace(/\s+/g, ' ');
}

/**
 * GitLab's code quality report: the Code Climate issue fields GitLab reads (description, check_name,
 * fingerprint, severity, location.path, location.lines.begin), one issue per result that is not
 * suppressed; a failing result is `major` (`blocker` is kept for none), a warning `minor`, a note `info`.
 */
export function toGitlab(d: GateDecision, lockFile: string): string {
  const issues: unknown[] = [];
  for (const v of d.verdicts) {
    for (const r of v.results) {
      if (r.suppressed) continue;
      issues.push({
        type: 'issue',
        description: `${r.message}${r.related?.length ? ` Cause: ${r.related.map((p) => p.message).join('; ')}.` : ''}`,
        check_name: r.rule,
        fingerprint: fingerprintOf(v.run.key, r.rule).replace(/:1$/, ''),
        severity: r.fails ? 'major' : r.level === 'warning' ? 'minor' : 'info',
        categories: ['Performance'],
        location: { path: v.run.file, lines: { begin: r.range.startLine, end: r.range.endLine } },
      });
    }
  }
  for (const w of d.expiredWaivers) {
    issues.push({
      type: 'issue',
      description: `The waiver of ${w.rule} on ${w.query} expired on ${w.expires} (${w.owner}: ${w.reason}); the query was not found.`,
      check_name: 'qpi.check.waiver-expired',
      fingerprint: fingerprintOf(`waiver ${w.query}`, w.rule).replace(/:1$/, ''),
      severity: 'major',
      categories: ['Performance'],
      location: { path: lockFile, lines: { begin: 1, end: 1 } },
    });
  }
  return `${JSON.stringify(issues, null, 2)}\n`;
}

/** The document `qpi check --json` prints: everything a merge needs to give the same outputs again. */
export interface CheckJson {
  schemaVersion: 1;
  passed: boolean;
  exitCode: number;
  counts: GateCounts;
  environment: Lock['environment'];
  expiredWaivers: Waiver[];
  /** The part of the repository this document covers, when a run checked a part (`--shard 2/4`, `--changed-since main`). */
  part?: string;
  queries: CheckJsonQuery[];
}

export interface CheckJsonQuery {
  key: string;
  file: string;
  line: number;
  column: number;
  engine: QueryRun['engine'];
  scope?: string;
  title: string;
  shape: string;
  range: QueryRun['range'];
  status: QueryRun['status'];
  outcome: QueryVerdict['outcome'];
  baselineState: QueryVerdict['baselineState'];
  notExplainable?: string;
  signature?: QueryRun['signature'];
  counters?: QueryRun['counters'];
  ignores: QueryRun['ignores'];
  findings: QueryRun['findings'];
  /** `--measure`: the measured advice on a query that failed, or why it was not measured. */
  measurement?: QueryRun['measurement'];
  /** The rules the lock held findings of, when the query was in it. */
  baselineFindings?: string[];
  results: GateResult[];
}

export function toJsonDocument(d: GateDecision, exitCode: number, environment: Lock['environment'], part?: string): CheckJson {
  return {
    schemaVersion: 1,
    passed: d.passed,
    exitCode,
    counts: gateCounts(d),
    environment,
    expiredWaivers: d.expiredWaivers,
    ...(part !== undefined ? { part } : {}),
    queries: d.verdicts.map((v) => ({
      key: v.run.key,
      file: v.run.file,
      line: v.run.range.startLine,
      column: v.run.range.startColumn,
      engine: v.run.engine,
      ...(v.run.scope !== undefined ? { scope: v.run.scope } : {}),
      title: v.run.title,
      shape: v.run.shape,
      range: v.run.range,
      status: v.run.status,
      outcome: v.outcome,
      baselineState: v.baselineState,
      ...(v.run.why !== undefined ? { notExplainable: v.run.why } : {}),
      ...(v.run.signature ? { signature: v.run.signature } : {}),
      ...(v.run.counters ? { counters: v.run.counters } : {}),
      ignores: v.run.ignores,
      findings: v.run.findings,
      ...(v.run.measurement ? { measurement: v.run.measurement } : {}),
      ...(v.baseline ? { baselineFindings: v.baseline.findings } : {}),
      results: v.results,
    })),
  };
}

/** A decision read back from `--json` documents, as the outputs need it. */
export function decisionFromJson(doc: CheckJson): GateDecision {
  const verdicts: QueryVerdict[] = doc.queries.map((q) => {
    const run: QueryRun = {
      key: q.key, engine: q.engine, file: q.file, ...(q.scope !== undefined ? { scope: q.scope } : {}), shape: q.shape, title: q.title, range: q.range,
      ignores: q.ignores, status: q.status, ...(q.notExplainable !== undefined ? { why: q.notExplainable } : {}),
      ...(q.signature ? { signature: q.signature } : {}), ...(q.counters ? { counters: q.counters } : {}), findings: q.findings,
      ...(q.measurement ? { measurement: q.measurement } : {}),
    };
    const baseline = q.baselineFindings ? { engine: q.engine, file: q.file, shape: q.shape, findings: q.baselineFindings } : undefined;
    return { run, outcome: q.outcome, baselineState: q.baselineState, results: q.results, ...(baseline ? { baseline } : {}) };
  });
  return { verdicts, expiredWaivers: doc.expiredWaivers, passed: doc.passed };
}

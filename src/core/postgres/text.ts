// Reads the text format of EXPLAIN as people paste it: straight from psql (header, dashes, "(N rows)"
// footer, "+" continuation marks, frames), from pgAdmin (every line in double quotes), from an
// auto_explain log entry, or bare; Windows line endings and tabs included. The indented "->" tree is
// rewritten into the JSON format's shape (same key names, same zero counters the JSON format prints) and
// handed to the JSON converter, so a plan reads the same whichever format it was printed in.

import type { LoadResult } from '../model';
import { parsePostgresJson, planFromQuery } from './json';
import {
  BOOLEAN_KEYS,
  BUFFER_COUNTER_KEYS,
  IO_TIMING_KEYS_14,
  IO_TIMING_KEYS_17,
  LIST_KEYS,
  NUMERIC_KEYS,
  WAL_KEYS,
  bool,
  isObj,
  num,
  splitIdentTokens,
  splitQualified,
  splitTopLevel,
  unquoteIdent,
  type Doc,
} from './shape';
import { parsePostgresXml } from './xml';
import { parsePostgresYaml } from './yaml';

interface Line {
  /** 1-based line number in the input, for messages. */
  no: number;
  indent: number;
  text: string;
}

export function parsePostgresText(input: string): LoadResult {
  const warnings: string[] = [];
  const prepared = prepare(input, warnings);
  if (prepared.kind === 'refusal') return { ok: false, refusal: prepared.refusal };
  if (prepared.kind === 'delegate') return delegate(prepared.format, prepared.body, warnings);
  const reader = new TreeReader(warnings);
  // The text ends on its last plan line without a line break: that line may have been cut anywhere.
  const lastPlanLine = [...prepared.lines].reverse().find((l) => l.text !== '');
  const openEnd = !/[\r\n][ \t]*$/.test(input) && lastPlanLine !== undefined && lastPlanLine.no === input.split(/\r\n|\r|\n/).length;
  const query = reader.read(prepared.lines, prepared.query, openEnd);
  if (typeof query === 'string') return { ok: false, refusal: query };
  return planFromQuery(query, 'postgres-text', warnings);
}

// ---------------------------------------------------------------------------------------------------
// Unwrapping what clients put around the plan

type Prepared =
  | { kind: 'plan'; lines: Line[]; query: Doc }
  | { kind: 'delegate'; format: 'json' | 'yaml' | 'xml'; body: string }
  | { kind: 'refusal'; refusal: string };

interface RawLine {
  no: number;
  s: string;
}

const FOOTER_ROWS = /^\((\d+) [^\s()]+\)$/;
const LOG_RECORD = /^\S.*\b(LOG|ERROR|WARNING|STATEMENT|DETAIL|HINT|CONTEXT|NOTICE|INFO|FATAL|PANIC|DEBUG\d?):\s/;

function prepare(input: string, warnings: string[]): Prepared {
  let lines: RawLine[] = input.split(/\r\n|\r|\n/).map((s, i) => ({ no: i + 1, s: expandLeadingTabs(s).trimEnd() }));
  const nonEmpty = (ls: RawLine[]): RawLine[] => ls.filter((l) => l.s.trim() !== '');
  if (nonEmpty(lines).length === 0) return { kind: 'refusal', refusal: 'The input is empty: paste or open an explain output.' };

  // pgAdmin copies every line as a CSV field: in double quotes, with inner quotes doubled.
  const quotedRe = /^\s*"(.*)"\s*,?$/;
  const quoted = nonEmpty(lines).filter((l) => quotedRe.test(l.s)).length;
  if (quoted >= Math.max(1, nonEmpty(lines).length * 0.6)) {
    lines = lines.map((l) => {
      const m = quotedRe.exec(l.s);
      return m ? { no: l.no, s: m[1]!.replace(/""/g, '"') } : l;
    });
  }

  // psql expanded display (\x): one "QUERY PLAN | ..." record per plan line.
  if (lines.some((l) => /^QUERY PLAN\s*\| ?/.test(l.s.trimStart()))) {
    lines = lines
      .filter((l) => !/^-\[ RECORD \d+ \]/.test(l.s.trim()))
      .map((l) => ({ no: l.no, s: l.s.replace(/^\s*(?:QUERY PLAN\s*)?\| ?/, '') }));
  }

  // psql frames (border 2, ASCII or Unicode): drop the rules, strip the side bars.
  const rule = /^\s*[+┌├└╔╠╚╒╞╘][-+─═┬┼┴┐┤┘╗╣╝╤╪╧╕╡╛]*$/;
  const inner = nonEmpty(lines).filter((l) => !rule.test(l.s));
  const framed = inner.filter((l) => /^\s*[|│║]/.test(l.s) && /[|│║]$/.test(l.s)).length;
  if (framed > 0 && framed >= inner.length * 0.5) {
    lines = lines
      .filter((l) => !rule.test(l.s))
      .map((l) => ({ no: l.no, s: l.s.replace(/^\s*[|│║] ?/, '').replace(/ ?[|│║]$/, '').trimEnd() }));
  }

  // psql header: everything up to the dashes under "QUERY PLAN" (prompts, the echoed statement) goes.
  const header = lines.findIndex((l) => /^QUERY PLAN$/i.test(l.s.trim()));
  if (header >= 0) {
    let start = header + 1;
    while (start < lines.length && lines[start]!.s.trim() === '') start++;
    if (start < lines.length && /^[-─═+]+$/.test(lines[start]!.s.trim())) start++;
    else start = header + 1;
    lines = lines.slice(start);
  }
  // psql footer "(N rows)", in any language; what follows it (timing, the next prompt) goes.
  const footer = lines.findIndex((l) => FOOTER_ROWS.test(l.s.trim()));
  if (footer >= 0) lines = lines.slice(0, footer);

  // psql aligned mode marks a value's inner newlines with a trailing "+" (a JSON plan in one cell).
  const plus = nonEmpty(lines).filter((l) => /\s\+$/.test(l.s)).length;
  if (plus > 0 && plus >= (nonEmpty(lines).length - 1) * 0.5) {
    lines = lines.map((l) => ({ no: l.no, s: /\s\+$/.test(l.s) ? l.s.slice(0, -1).trimEnd() : l.s }));
  }

  // auto_explain: "... LOG:  duration: 12.3 ms  plan:" then the plan, up to the next log record.
  const logStart = lines.findIndex((l) => /duration: \d+(\.\d+)? ms\s+plan:\s*$/.test(l.s));
  if (logStart >= 0) {
    let end = logStart + 1;
    while (end < lines.length && !LOG_RECORD.test(lines[end]!.s)) end++;
    const more = lines.slice(end).some((l) => /duration: \d+(\.\d+)? ms\s+plan:\s*$/.test(l.s));
    if (more) warnings.push('The log holds more than one auto_explain entry; only the first is read.');
    lines = lines.slice(logStart + 1, end);
  }

  while (lines.length > 0 && lines[0]!.s.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.s.trim() === '') lines.pop();
  if (lines.length === 0) return { kind: 'refusal', refusal: 'The text has a psql frame but no plan lines inside it.' };

  const body = lines.map((l) => l.s).join('\n');
  const head = body.trimStart();
  if (head.startsWith('[') || head.startsWith('{')) return { kind: 'delegate', format: 'json', body: head };
  if (head.startsWith('<')) return { kind: 'delegate', format: 'xml', body: head };
  // YAML: psql's list form, or auto_explain's mapping with "Query Text:" before "Plan:".
  if (/^-\s+Plan:/.test(head) || (/^(- )?Plan:[ \t]*$/m.test(head) && /^[ \t]+Node Type:/m.test(head))) {
    return { kind: 'delegate', format: 'yaml', body };
  }

  const query: Doc = {};
  const out = lines.map((l) => toLine(l));
  const first = out.findIndex((l) => l.text !== '');
  if (first >= 0 && /^Query Text:/.test(out[first]!.text)) {
    const rest = takeQueryText(out, first, query);
    return { kind: 'plan', lines: rest, query };
  }
  return { kind: 'plan', lines: out, query };
}

function expandLeadingTabs(s: string): string {
  return s.replace(/^[ \t]+/, (m) => m.replace(/\t/g, '        '));
}

function toLine(l: RawLine): Line {
  const text = l.s.trimStart();
  return { no: l.no, indent: l.s.length - text.length, text: text.trimEnd() };
}

/**
 * auto_explain prints "Query Text: <sql>" before the plan, the SQL keeping its own line breaks. The query
 * ends where the plan's first node line (the one with the cost or actual figures) starts, or, without
 * such a line, at the first line no deeper than "Query Text:".
 */
function takeQueryText(lines: Line[], first: number, query: Doc): Line[] {
  const q = lines[first]!;
  const figures = /\s\((cost=|actual (time|rows)=|never executed)/;
  let end = lines.findIndex((l, i) => i > first && figures.test(l.text) && l.indent <= q.indent);
  if (end < 0) {
    end = first + 1;
    while (end < lines.length && (lines[end]!.text === '' || lines[end]!.indent > q.indent)) end++;
  }
  const sqlLines: Line[] = [];
  for (let i = first + 1; i < end; i++) {
    const l = lines[i]!;
    const param = /^Query Parameters:\s*(.*)$/.exec(l.text);
    if (param && l.indent <= q.indent) query['Query Parameters'] = param[1];
    else sqlLines.push(l);
  }
  const cont = sqlLines.filter((l) => l.text !== '');
  const common = cont.length > 0 ? Math.min(...cont.map((l) => l.indent)) : 0;
  const text = [q.text.replace(/^Query Text:\s?/, ''), ...sqlLines.map((l) => (l.text === '' ? '' : ' '.repeat(l.indent - common) + l.text))];
  query['Query Text'] = text.join('\n').trim();
  return lines.slice(end);
}

function delegate(format: 'json' | 'yaml' | 'xml', body: string, warnings: string[]): LoadResult {
  let result: LoadResult;
  if (format === 'json') {
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const pos = /position (\d+)/.exec(msg);
      if (/end of JSON input|Unterminated string/i.test(msg) || (pos && Number(pos[1]) >= body.trimEnd().length - 1)) {
        return { ok: false, refusal: `The JSON plan inside the pasted output ends early at position ${body.trimEnd().length}: it looks truncated, copy it again in full.` };
      }
      return { ok: false, refusal: `The JSON plan inside the pasted output is malformed${pos ? ` at position ${pos[1]}` : ''}.` };
    }
    result = parsePostgresJson(doc, 'postgres-json');
  } else if (format === 'yaml') {
    result = parsePostgresYaml(body);
  } else {
    result = parsePostgresXml(body);
  }
  if (result.ok) result.plan.warnings.unshift(...warnings);
  return result;
}

// ---------------------------------------------------------------------------------------------------
// The node tree

interface TNode {
  doc: Doc;
  /** Column where the node's name starts; its detail lines are deeper, its siblings and footers are not. */
  nameCol: number;
  /** Children that are not InitPlans, SubPlans or CTEs, in order, to name them Outer/Inner/Member. */
  normal: Doc[];
  /** An "InitPlan 1 (returns $0)", "SubPlan 2" or "CTE name" line waiting for its node. */
  header?: { name: string; role: string; indent: number };
  /** The "Worker N:" block being read. */
  worker?: { doc: Doc; indent: number };
  /** Sort Key / Group Key / Hash Key lines in order: grouping sets need them together. */
  keyLines: { key: string; value: string; indent: number }[];
  unparsed: string[];
  /** Line of the node in the input, for messages. */
  no: number;
}

/**
 * Inputs each node kind always has (InitPlans, SubPlans and CTEs aside). A node with fewer lost them when
 * the text was cut at a line boundary, which no other sign reveals: every remaining line still reads.
 */
const INPUTS_NEEDED: Record<string, number> = {
  'Nested Loop': 2, 'Hash Join': 2, 'Merge Join': 2, 'Recursive Union': 2, BitmapAnd: 2, BitmapOr: 2,
  Hash: 1, Sort: 1, 'Incremental Sort': 1, Limit: 1, Materialize: 1, Memoize: 1, Gather: 1, 'Gather Merge': 1,
  Unique: 1, Aggregate: 1, Group: 1, WindowAgg: 1, SetOp: 1, LockRows: 1, 'Subquery Scan': 1, ProjectSet: 1,
  'Bitmap Heap Scan': 1,
};

/** Node types as the JSON format names them (PostgreSQL 9 to 18). */
const KNOWN_TYPES = new Set([
  'Result', 'ProjectSet', 'ModifyTable', 'Append', 'Merge Append', 'Recursive Union', 'BitmapAnd', 'BitmapOr', 'Nested Loop',
  'Merge Join', 'Hash Join', 'Seq Scan', 'Sample Scan', 'Gather', 'Gather Merge', 'Index Scan', 'Index Only Scan',
  'Bitmap Index Scan', 'Bitmap Heap Scan', 'Tid Scan', 'Tid Range Scan', 'Subquery Scan', 'Function Scan', 'Table Function Scan',
  'Values Scan', 'CTE Scan', 'Named Tuplestore Scan', 'WorkTable Scan', 'Foreign Scan', 'Custom Scan', 'Materialize', 'Memoize',
  'Sort', 'Incremental Sort', 'Group', 'Aggregate', 'WindowAgg', 'Unique', 'SetOp', 'LockRows', 'Limit', 'Hash',
]);

/** Node names as the text format prints them, before "on" or "using": what a cut name is a prefix of. */
const KNOWN_NAMES: string[] = [
  ...[...KNOWN_TYPES].filter((t) => t !== 'ModifyTable' && t !== 'Aggregate' && t !== 'SetOp'),
  'Insert', 'Update', 'Delete', 'Merge', 'Foreign Insert', 'Foreign Update', 'Foreign Delete', 'Index Scan Backward', 'Index Only Scan Backward',
  ...['Aggregate', 'HashAggregate', 'GroupAggregate', 'MixedAggregate'].flatMap((a) => [a, `Partial ${a}`, `Finalize ${a}`]),
  ...['SetOp', 'HashSetOp'].flatMap((o) => ['Intersect', 'Intersect All', 'Except', 'Except All'].map((c) => `${o} ${c}`)),
  ...['Nested Loop', 'Hash', 'Merge'].flatMap((j) => ['Left', 'Right', 'Full', 'Semi', 'Anti', 'Right Semi', 'Right Anti'].map((t) => `${j} ${t} Join`)),
];

const COST_RE = /\s+\(cost=(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?) rows=(\d+(?:\.\d+)?) width=(\d+)\)$/;
const ACTUAL_RE = /\s+\((?:actual (?:time=(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?) )?rows=(\d+(?:\.\d+)?) loops=(\d+)|(never executed))\)$/;
const NODE_START =
  /^(Parallel |Async )*(Seq Scan|Sample Scan|Index Scan|Index Only Scan|Bitmap Index Scan|Bitmap Heap Scan|Tid Scan|Tid Range Scan|Subquery Scan|Function Scan|Table Function Scan|Values Scan|CTE Scan|Named Tuplestore Scan|WorkTable Scan|Foreign Scan|Foreign Insert|Foreign Update|Foreign Delete|Custom Scan|Result|ProjectSet|Insert|Update|Delete|Merge|Append|Merge Append|Recursive Union|BitmapAnd|BitmapOr|Nested Loop|Hash|Gather|Gather Merge|Materialize|Memoize|Sort|Incremental Sort|Group|Aggregate|GroupAggregate|HashAggregate|MixedAggregate|Partial|Finalize|WindowAgg|Unique|SetOp|HashSetOp|LockRows|Limit)\b/;
const KEY_VALUE = /^([A-Za-z][A-Za-z0-9 /_-]*?):(?:\s+(.*))?$/;
const SUBPLAN_HEADER = /^(InitPlan|SubPlan)(?:\s+\d+)?(?:\s+\(returns [^)]*\))?$/;
const CTE_HEADER = /^CTE\s+(\S.*)$/;

function looksLikeNode(text: string): boolean {
  if (/\s\((cost=|actual (time|rows)=|never executed)/.test(text)) return true;
  if (KEY_VALUE.test(text)) return false;
  return NODE_START.test(text);
}

/** Unbalanced parentheses outside quotes: a line cut in the middle. */
function openParens(s: string): number {
  let depth = 0;
  let quote: string | null = null;
  for (const c of s) {
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
  }
  return depth;
}

class TreeReader {
  private root: TNode | undefined;
  private stack: TNode[] = [];
  private readonly all: TNode[] = [];
  private query: Doc = {};
  private footerBlock: { doc: Doc; indent: number; kind: 'Planning' | 'JIT' | 'Serialization' } | undefined;
  private inFooter = false;
  private stopped = false;
  private damaged = false;
  private unknownFooter: string[] = [];
  private ioKeys = new Set<string>();
  private sawBuffers = false;
  private sawWal = false;
  private timed = false;

  constructor(private readonly warnings: string[]) {}

  read(lines: Line[], query: Doc, openEnd = false): Doc | string {
    this.query = query;
    const skipped: Line[] = [];
    for (const line of lines) {
      if (this.stopped) break;
      if (line.text === '') continue;
      if (!this.root) {
        if (line.text.startsWith('->') || looksLikeNode(line.text)) this.startRoot(line);
        else skipped.push(line);
        continue;
      }
      if (this.inFooter) this.footerLine(line);
      else if (line.text.startsWith('->')) this.childLine(line);
      else this.propertyLine(line);
    }
    if (!this.root) {
      return 'This text has no PostgreSQL plan in it: no line looks like a plan node (for example "Seq Scan on t  (cost=0.00..1.10 rows=10 width=4)").';
    }
    const cut = this.truncation(lines) ?? this.cutTree(lines) ?? this.cutName(lines, openEnd);
    if (cut) return cut;
    if (skipped.length > 0) {
      this.warnings.push(`${skipped.length} line(s) before the plan were not part of it and were skipped (first: line ${skipped[0]!.no}).`);
    }
    this.finish();
    this.query.Plan = this.root.doc;
    // EXPLAIN ANALYZE ends with "Execution Time" (auto_explain, which logs "Query Text" instead, does not).
    if (this.timed && this.query['Execution Time'] === undefined && this.query['Query Text'] === undefined) {
      this.warnings.push('The plan has actual times but no "Execution Time" line after it: the text may have been cut short, and what is missing is not shown.');
    }
    return this.query;
  }

  /** A refusal when a node lacks inputs its kind always has: the tree was cut after its last line. */
  private cutTree(lines: Line[]): string | undefined {
    for (const t of this.all) {
      const kind = str0(t.doc['Node Type']);
      const needed = INPUTS_NEEDED[kind] ?? 0;
      if (t.normal.length >= needed) continue;
      const lastNo = [...lines].reverse().find((l) => l.text !== '')?.no ?? t.no;
      const has = t.normal.length === 0 ? 'none' : `${t.normal.length}`;
      return `The plan text is cut after line ${lastNo}: the ${kind} on line ${t.no} has ${has} of the ${needed} input${needed === 1 ? '' : 's'} it always has, so the rest of the tree is missing; copy the whole plan.`;
    }
    return undefined;
  }

  /**
   * A refusal when the last line is a node whose name stops inside a known one ("Bitm", "Hash Jo", "Seq
   * Scan on"): the text was cut there (COSTS OFF prints no figures whose open parenthesis would show it).
   * An unknown name elsewhere is a node of a newer server and loads; on the last line of a text that ends
   * without a line break it may be either, so the plan loads with a warning.
   */
  private cutName(lines: Line[], openEnd: boolean): string | undefined {
    const last = [...lines].reverse().find((l) => l.text !== '');
    const node = last && this.all.find((t) => t.no === last.no);
    if (!last || !node || node.doc['Startup Cost'] !== undefined || node.doc['Actual Rows'] !== undefined) return undefined;
    const label = (last.text.startsWith('->') ? last.text.slice(2) : last.text).trim();
    const name = label.replace(/^((Parallel|Async) )+/, '');
    const snippet = last.text.length > 60 ? `${last.text.slice(0, 60)}...` : last.text;
    const prefix = !KNOWN_NAMES.includes(name) && KNOWN_NAMES.some((k) => k.startsWith(name) && k !== name);
    if (prefix || / (on|using)$/.test(name)) {
      return `The plan text stops in the middle of a node name on line ${last.no} ("${snippet}"): it looks truncated, copy it again in full.`;
    }
    const type = str0(node.doc['Node Type']);
    if (openEnd && !KNOWN_TYPES.has(type)) {
      this.warnings.push(`The last line (${last.no}, "${snippet}") names a node type this reader does not know and the text ends there without a line break: it may have been cut, and nodes after it may be missing.`);
    }
    return undefined;
  }

  /** A refusal when the last line was cut in the middle (the rest of the plan is then surely missing). */
  private truncation(lines: Line[]): string | undefined {
    const last = [...lines].reverse().find((l) => l.text !== '');
    if (!last) return undefined;
    const t = last.text;
    const cutNode = /\((cost|actual)\b[^)]*$/.test(t) || /\(never( executed)?$/.test(t);
    const danglingKey = /[=:]$/.test(t) && !/^(Planning|JIT):$/.test(t);
    if (cutNode || openParens(t) > 0 || danglingKey) {
      const snippet = t.length > 60 ? `${t.slice(0, 60)}...` : t;
      return `The plan text stops in the middle of line ${last.no} ("${snippet}"): it looks truncated, copy it again in full.`;
    }
    return undefined;
  }

  private newNode(text: string, nameCol: number, no: number): TNode {
    const doc = nodeDoc(text, (msg) => this.warnings.push(`Line ${no}: ${msg}`));
    if (doc['Actual Total Time'] !== undefined) this.timed = true;
    const t: TNode = { doc, nameCol, normal: [], keyLines: [], unparsed: [], no };
    this.all.push(t);
    return t;
  }

  private startRoot(line: Line): void {
    let text = line.text;
    let nameCol = line.indent;
    if (text.startsWith('->')) {
      // A pasted subtree: its top node still carries the arrow.
      const after = text.slice(2);
      nameCol += 2 + (after.length - after.trimStart().length);
      text = after.trim();
    }
    this.root = this.newNode(text, nameCol, line.no);
    this.stack = [this.root];
  }

  private childLine(line: Line): void {
    const arrow = line.indent;
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.nameCol >= arrow) this.stack.pop();
    let parent = this.stack[this.stack.length - 1];
    if (!parent) {
      if (!this.damaged) this.warnings.push(`The indentation looks damaged at line ${line.no}: nodes from there are hung under the top node.`);
      this.damaged = true;
      parent = this.root!;
      this.stack = [parent];
    }
    const after = line.text.slice(2);
    const node = this.newNode(after.trim(), arrow + 2 + (after.length - after.trimStart().length), line.no);
    if (parent.header && arrow > parent.header.indent) {
      node.doc['Parent Relationship'] = parent.header.role;
      node.doc['Subplan Name'] = parent.header.name;
    } else {
      parent.header = undefined;
      parent.normal.push(node.doc);
    }
    parent.worker = undefined;
    const plans = Array.isArray(parent.doc.Plans) ? parent.doc.Plans : (parent.doc.Plans = []);
    (plans as Doc[]).push(node.doc);
    this.stack.push(node);
  }

  private propertyLine(line: Line): void {
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.nameCol >= line.indent) this.stack.pop();
    const owner = this.stack[this.stack.length - 1];
    if (!owner) {
      this.inFooter = true;
      this.footerLine(line);
      return;
    }
    const t = line.text;
    if (owner.worker && line.indent > owner.worker.indent) {
      this.property(owner.worker.doc, t, owner, true);
      return;
    }
    owner.worker = undefined;
    const sub = SUBPLAN_HEADER.exec(t);
    if (sub) {
      owner.header = { name: t, role: sub[1]!, indent: line.indent };
      return;
    }
    if (CTE_HEADER.test(t) && !t.includes(': ')) {
      owner.header = { name: t, role: 'InitPlan', indent: line.indent };
      return;
    }
    const worker = /^Worker (\d+):\s*(.*)$/.exec(t);
    if (worker) {
      const doc = workerDoc(owner.doc, Number(worker[1]));
      owner.worker = { doc, indent: line.indent };
      if (worker[2]) this.property(doc, worker[2], owner, true);
      return;
    }
    const kv = KEY_VALUE.exec(t);
    if (kv && (kv[1] === 'Sort Key' || kv[1] === 'Group Key' || kv[1] === 'Hash Key')) {
      owner.keyLines.push({ key: kv[1], value: kv[2] ?? '', indent: line.indent });
      return;
    }
    this.property(owner.doc, t, owner, false);
  }

  /** One detail line of a node or of one of its workers, written with the JSON format's keys. */
  private property(target: Doc, text: string, owner: TNode, inWorker: boolean): void {
    const actual = /^actual (?:time=(\S+)\.\.(\S+) )?rows=(\S+) loops=(\S+)$/.exec(text);
    if (actual) {
      if (actual[1] !== undefined) {
        target['Actual Startup Time'] = Number(actual[1]);
        target['Actual Total Time'] = Number(actual[2]);
      }
      target['Actual Rows'] = Number(actual[3]);
      target['Actual Loops'] = Number(actual[4]);
      return;
    }
    const kv = KEY_VALUE.exec(text);
    if (!kv) {
      // ModifyTable lists its partitions or inheritance children as "Update on public.ta1 ta_1".
      if (/^(Insert|Update|Delete|Merge) on \S/.test(text)) {
        const list = Array.isArray(target['Target Tables']) ? (target['Target Tables'] as unknown[]) : (target['Target Tables'] = []);
        (list as unknown[]).push(text);
      } else {
        owner.unparsed.push(text);
      }
      return;
    }
    const key = kv[1]!;
    const value = kv[2] ?? '';
    switch (key) {
      case 'Buffers':
        this.sawBuffers = true;
        readBuffersText(value, target);
        return;
      case 'I/O Timings':
        for (const k of readIoTimingsText(value, target)) this.ioKeys.add(k);
        return;
      case 'WAL':
        this.sawWal = true;
        readWalText(value, target);
        return;
      case 'Sort Method':
        readSortMethod(value, target);
        return;
      case 'Buckets':
        readBuckets(text, target);
        return;
      case 'Batches':
      case 'Planned Partitions':
        readHashAgg(text, target);
        return;
      case 'Full-sort Groups':
      case 'Pre-sorted Groups':
        for (const part of text.split(/\s{2,}(?=Pre-sorted Groups:)/)) readSortGroups(part, target);
        return;
      case 'Heap Blocks':
        target['Exact Heap Blocks'] = Number(/exact=(\d+)/.exec(value)?.[1] ?? 0);
        target['Lossy Heap Blocks'] = Number(/lossy=(\d+)/.exec(value)?.[1] ?? 0);
        return;
      case 'Hits':
        readMemoize(text, target);
        return;
      case 'Storage':
        readStorage(text, target);
        return;
      case 'Tuples':
        for (const [, op, n] of value.matchAll(/(\w+)=(\d+)/g)) target[`Tuples ${op![0]!.toUpperCase()}${op!.slice(1)}`] = Number(n);
        return;
      case 'JIT':
        if (inWorker) {
          if (!isObj(target.JIT)) target.JIT = {};
          return;
        }
        break;
      case 'Functions':
      case 'Options':
      case 'Timing':
        if (inWorker) {
          const jit = isObj(target.JIT) ? target.JIT : (target.JIT = {});
          readJitLine(key, value, jit as Doc);
          return;
        }
        break;
      default:
        break;
    }
    if (NUMERIC_KEYS.has(key)) target[key] = num(value) ?? value;
    else if (BOOLEAN_KEYS.has(key)) target[key] = bool(value) ?? value;
    else if (LIST_KEYS.has(key)) target[key] = splitTopLevel(value);
    else target[key] = value;
  }

  private footerLine(line: Line): void {
    const t = line.text;
    if (this.footerBlock && line.indent > this.footerBlock.indent) {
      this.blockLine(this.footerBlock, t);
      return;
    }
    this.footerBlock = undefined;
    let m: RegExpExecArray | null;
    if ((m = /^Planning Time:\s*(\S+)\s*ms$/i.exec(t))) {
      this.query['Planning Time'] = num(m[1]);
    } else if ((m = /^(?:Execution Time|Total runtime):\s*(\S+)\s*ms$/i.exec(t))) {
      this.query['Execution Time'] = num(m[1]);
    } else if (/^Planning:$/.test(t)) {
      const doc: Doc = {};
      this.query.Planning = doc;
      this.footerBlock = { doc, indent: line.indent, kind: 'Planning' };
    } else if (/^JIT:$/.test(t)) {
      const doc: Doc = {};
      this.query.JIT = doc;
      this.footerBlock = { doc, indent: line.indent, kind: 'JIT' };
    } else if ((m = /^Serialization:\s*(.*)$/.exec(t))) {
      const doc: Doc = {};
      const time = /time=(\S+) ms/.exec(m[1]!);
      if (time) doc.Time = num(time[1]);
      const out = /output=(\d+)kB/.exec(m[1]!);
      if (out) doc['Output Volume'] = Number(out[1]);
      const format = /format=(\S+)/.exec(m[1]!);
      if (format) doc.Format = format[1];
      this.query.Serialization = doc;
      this.footerBlock = { doc, indent: line.indent, kind: 'Serialization' };
    } else if ((m = /^Trigger(?: (?!for constraint )(.+?))?(?: for constraint (.+?))?(?: on (\S+))?: (?:time=(\S+) )?calls=(\S+)$/.exec(t))) {
      const trig: Doc = {};
      if (m[1] !== undefined) trig['Trigger Name'] = m[1];
      if (m[2] !== undefined) trig['Constraint Name'] = m[2];
      if (m[3] !== undefined) trig.Relation = m[3];
      if (m[4] !== undefined) trig.Time = num(m[4]);
      trig.Calls = num(m[5]);
      const list = Array.isArray(this.query.Triggers) ? this.query.Triggers : (this.query.Triggers = []);
      (list as Doc[]).push(trig);
    } else if ((m = /^Settings:\s*(.*)$/.exec(t))) {
      this.query.Settings = readSettings(m[1]!);
    } else if ((m = /^Query Identifier:\s*(\S+)$/.exec(t))) {
      this.query['Query Identifier'] = m[1];
    } else if ((m = /^Query Text:\s*(.*)$/.exec(t))) {
      this.query['Query Text'] = m[1];
    } else if ((m = /^Query Parameters:\s*(.*)$/.exec(t))) {
      this.query['Query Parameters'] = m[1];
    } else if (looksLikeNode(t) || t.startsWith('->')) {
      this.warnings.push(`The text holds more than one plan; only the first is read (the next starts at line ${line.no}).`);
      this.stopped = true;
    } else {
      this.unknownFooter.push(t);
      if (this.unknownFooter.length === 1) this.warnings.push(`Line ${line.no} after the plan was not understood and is kept as text: "${t.slice(0, 80)}".`);
    }
  }

  private blockLine(block: { doc: Doc; kind: 'Planning' | 'JIT' | 'Serialization' }, t: string): void {
    const kv = KEY_VALUE.exec(t);
    const key = kv?.[1];
    const value = kv?.[2] ?? '';
    if (key === 'Buffers') readBuffersText(value, block.doc);
    else if (key === 'I/O Timings') readIoTimingsText(value, block.doc);
    else if (key === 'Memory' && block.kind === 'Planning') {
      const used = /used=(\d+)kB/.exec(value);
      const allocated = /allocated=(\d+)kB/.exec(value);
      if (used) block.doc['Memory Used'] = Number(used[1]);
      if (allocated) block.doc['Memory Allocated'] = Number(allocated[1]);
    } else if (key && block.kind === 'JIT') readJitLine(key, value, block.doc);
    else {
      this.unknownFooter.push(t);
      this.warnings.push(`A line of the ${block.kind} block was not understood and is kept as text: "${t.slice(0, 80)}".`);
    }
  }

  /** Completes every node the way the JSON format prints it, then names children. */
  private finish(): void {
    const analyzed = this.root!.doc['Actual Loops'] !== undefined;
    let unparsed = 0;
    let firstUnparsed: string | undefined;
    for (const t of this.all) {
      const d = t.doc;
      finishKeys(t);
      t.normal.forEach((child, i) => {
        child['Parent Relationship'] = normalRole(str0(d['Node Type']), i, t.normal.length);
      });
      if (t.unparsed.length > 0) {
        d['Unparsed Lines'] = t.unparsed;
        unparsed += t.unparsed.length;
        firstUnparsed ??= t.unparsed[0];
      }
      if (d['Actual Loops'] === 0 && this.timed) {
        d['Actual Startup Time'] = 0;
        d['Actual Total Time'] = 0;
      }
      if (analyzed) this.fillZeros(d);
    }
    if (unparsed > 0) {
      this.warnings.push(`${unparsed} detail line(s) were not understood and are kept as text on their node (first: "${firstUnparsed!.slice(0, 80)}").`);
    }
    if (this.unknownFooter.length > 0) this.query['Unparsed Lines'] = this.unknownFooter;
    // The JSON format prints every counter of the planning and serialization phases too.
    for (const block of [this.query.Planning, this.query.Serialization]) {
      if (!isObj(block) || !BUFFER_COUNTER_KEYS.some((k) => block[k] !== undefined)) continue;
      for (const k of [...BUFFER_COUNTER_KEYS, ...ioFamily(this.ioKeys)]) if (block[k] === undefined) block[k] = 0;
    }
  }

  /**
   * The text format leaves out zero counters that the JSON format prints; adding them back makes both
   * formats give the same model (a zero read is information: "this node read nothing").
   */
  private fillZeros(d: Doc): void {
    const fill = (target: Doc, keys: readonly string[]): void => {
      for (const k of keys) if (target[k] === undefined) target[k] = 0;
    };
    if (this.sawBuffers) fill(d, BUFFER_COUNTER_KEYS);
    if (this.sawWal) fill(d, WAL_KEYS);
    if (this.ioKeys.size > 0) fill(d, ioFamily(this.ioKeys));
    if (Array.isArray(d.Workers)) {
      for (const w of d.Workers.filter(isObj)) {
        if (BUFFER_COUNTER_KEYS.some((k) => w[k] !== undefined)) fill(w, BUFFER_COUNTER_KEYS);
      }
    }
    const type = d['Node Type'];
    if (d.Filter !== undefined) fill(d, ['Rows Removed by Filter']);
    if (d['Join Filter'] !== undefined) fill(d, ['Rows Removed by Join Filter']);
    if ((type === 'Bitmap Heap Scan' && d['Recheck Cond'] !== undefined) || (type === 'Index Scan' && d['Index Cond'] !== undefined)) {
      fill(d, ['Rows Removed by Index Recheck']);
    }
    if (type === 'Bitmap Heap Scan') fill(d, ['Exact Heap Blocks', 'Lossy Heap Blocks']);
    if (d['HashAgg Batches'] !== undefined) fill(d, ['Disk Usage']);
  }
}

function str0(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The I/O timing keys the server prints on every node, judged from the generation of syntax seen. */
function ioFamily(seen: Set<string>): readonly string[] {
  if ([...seen].some((k) => k.startsWith('Shared I/O') || k.startsWith('Local I/O'))) return IO_TIMING_KEYS_17;
  const keys: string[] = [];
  if (seen.has('I/O Read Time') || seen.has('I/O Write Time')) keys.push(...IO_TIMING_KEYS_14);
  if (seen.has('Temp I/O Read Time') || seen.has('Temp I/O Write Time') || seen.has('shared/local')) {
    keys.push('Temp I/O Read Time', 'Temp I/O Write Time');
  }
  return keys;
}

/** How PostgreSQL names a child that is not an InitPlan or SubPlan, from its parent's type. */
function normalRole(parentType: string, index: number, count: number): string {
  if (['Append', 'Merge Append', 'BitmapAnd', 'BitmapOr'].includes(parentType)) return 'Member';
  if (parentType === 'Subquery Scan') return 'Subquery';
  if (parentType === 'Custom Scan') return count === 1 ? 'child' : 'children';
  return index === 0 ? 'Outer' : 'Inner';
}

/** Turns Sort/Group/Hash Key lines into "Sort Key"/"Group Key" lists, or into "Grouping Sets". */
function finishKeys(t: TNode): void {
  const lines = t.keyLines;
  if (lines.length === 0) return;
  const groupLines = lines.filter((l) => l.key !== 'Sort Key');
  const isAgg = t.doc['Node Type'] === 'Aggregate';
  if (!isAgg || (groupLines.length <= 1 && groupLines.length === lines.length)) {
    for (const l of lines) t.doc[l.key] = splitTopLevel(l.value);
    return;
  }
  const base = Math.min(...lines.map((l) => l.indent));
  const sets: Doc[] = [];
  let current: Doc | undefined;
  let sorted = false;
  for (const l of lines) {
    const keys = l.value.trim() === '()' ? [] : splitTopLevel(l.value);
    if (l.key === 'Sort Key') {
      current = { 'Sort Key': keys };
      sorted = true;
      sets.push(current);
      continue;
    }
    const field = l.key === 'Hash Key' ? 'Hash Keys' : 'Group Keys';
    if (!current || (sorted && l.indent <= base) || (!sorted && !(field in current))) {
      current = {};
      sorted = false;
      sets.push(current);
    }
    const list = Array.isArray(current[field]) ? (current[field] as unknown[]) : (current[field] = []);
    (list as unknown[]).push(keys);
  }
  t.doc['Grouping Sets'] = sets;
}

function workerDoc(node: Doc, n: number): Doc {
  const list = (Array.isArray(node.Workers) ? node.Workers : (node.Workers = [])) as Doc[];
  let w = list.find((x) => x['Worker Number'] === n);
  if (!w) {
    w = { 'Worker Number': n };
    list.push(w);
    list.sort((a, b) => Number(a['Worker Number']) - Number(b['Worker Number']));
  }
  return w;
}

// ---------------------------------------------------------------------------------------------------
// One node line: "->  Index Scan Backward using i on s.t a  (cost=..) (actual ..)"

const AGG_STRATEGY: Record<string, string> = { HashAggregate: 'Hashed', GroupAggregate: 'Sorted', MixedAggregate: 'Mixed', Aggregate: 'Plain' };
const TARGET_FIELD: Record<string, string | null> = {
  'Seq Scan': 'Relation Name',
  'Sample Scan': 'Relation Name',
  'Bitmap Heap Scan': 'Relation Name',
  'Tid Scan': 'Relation Name',
  'Tid Range Scan': 'Relation Name',
  'Foreign Scan': 'Relation Name',
  'Function Scan': 'Function Name',
  'Table Function Scan': 'Table Function Name',
  'CTE Scan': 'CTE Name',
  'WorkTable Scan': 'CTE Name',
  'Named Tuplestore Scan': 'Tuplestore Name',
  'Values Scan': null,
  'Subquery Scan': null,
};

function nodeDoc(text: string, warn: (msg: string) => void): Doc {
  const doc: Doc = {};
  let label = text;
  const actual = ACTUAL_RE.exec(label);
  if (actual) {
    label = label.slice(0, actual.index);
    if (actual[5]) {
      doc['Actual Rows'] = 0;
      doc['Actual Loops'] = 0;
    } else {
      if (actual[1] !== undefined) {
        doc['Actual Startup Time'] = Number(actual[1]);
        doc['Actual Total Time'] = Number(actual[2]);
      }
      doc['Actual Rows'] = Number(actual[3]);
      doc['Actual Loops'] = Number(actual[4]);
    }
  }
  const cost = COST_RE.exec(label);
  if (cost) {
    label = label.slice(0, cost.index);
    doc['Startup Cost'] = Number(cost[1]);
    doc['Total Cost'] = Number(cost[2]);
    doc['Plan Rows'] = Number(cost[3]);
    doc['Plan Width'] = Number(cost[4]);
  }
  const broken = /\s*\((cost=|actual |never)/.exec(label);
  if (broken) {
    warn(`the figures of node "${label.slice(0, broken.index)}" could not be read and were left out.`);
    label = label.slice(0, broken.index);
  }
  Object.assign(doc, describeNode(label.trim()));
  return doc;
}

/** Node type and its qualifiers from the name PostgreSQL prints, as the JSON format spells them. */
function describeNode(label: string): Doc {
  const o: Doc = { 'Node Type': label, 'Parallel Aware': false };
  let rest = label;
  for (;;) {
    if (rest.startsWith('Parallel ')) {
      o['Parallel Aware'] = true;
      rest = rest.slice(9);
    } else if (rest.startsWith('Async ')) {
      o['Async Capable'] = true;
      rest = rest.slice(6);
    } else break;
  }
  let m: RegExpExecArray | null;
  if ((m = /^(?:(Partial|Finalize) )?(HashAggregate|GroupAggregate|MixedAggregate|Aggregate)$/.exec(rest))) {
    o['Node Type'] = 'Aggregate';
    o.Strategy = AGG_STRATEGY[m[2]!];
    o['Partial Mode'] = m[1] ?? 'Simple';
  } else if ((m = /^(HashSetOp|SetOp) (Intersect All|Intersect|Except All|Except)$/.exec(rest))) {
    o['Node Type'] = 'SetOp';
    o.Strategy = m[1] === 'HashSetOp' ? 'Hashed' : 'Sorted';
    o.Command = m[2];
  } else if (rest === 'Nested Loop' || (m = /^(Nested Loop|Hash|Merge)(?: (Right Semi|Right Anti|Left|Right|Full|Semi|Anti))? Join$/.exec(rest))) {
    o['Node Type'] = m ? (m[1] === 'Nested Loop' ? 'Nested Loop' : `${m[1]} Join`) : 'Nested Loop';
    o['Join Type'] = m?.[2] ?? 'Inner';
  } else if ((m = /^(Insert|Update|Delete|Merge) on (.+)$/.exec(rest))) {
    o['Node Type'] = 'ModifyTable';
    o.Operation = m[1];
    target(m[2]!, 'Relation Name', o);
  } else if ((m = /^Foreign (Insert|Update|Delete)(?: on (.+))?$/.exec(rest))) {
    o['Node Type'] = 'Foreign Scan';
    o.Operation = m[1];
    if (m[2]) target(m[2], 'Relation Name', o);
  } else if ((m = /^Custom Scan \((.*?)\)(?: on (.+))?$/.exec(rest))) {
    o['Node Type'] = 'Custom Scan';
    o['Custom Plan Provider'] = m[1];
    if (m[2]) target(m[2], 'Relation Name', o);
  } else if ((m = /^(Index Scan|Index Only Scan)( Backward)? using (.+)$/.exec(rest))) {
    o['Node Type'] = m[1];
    o['Scan Direction'] = m[2] ? 'Backward' : 'Forward';
    const tokens = splitIdentTokens(m[3]!);
    o['Index Name'] = unquoteIdent(tokens[0] ?? '');
    if (tokens[1] === 'on' && tokens.length > 2) target(tokens.slice(2).join(' '), 'Relation Name', o);
  } else if ((m = /^Bitmap Index Scan on (.+)$/.exec(rest))) {
    o['Node Type'] = 'Bitmap Index Scan';
    o['Index Name'] = unquoteIdent(m[1]!.trim());
  } else {
    const type = Object.keys(TARGET_FIELD).find((t) => rest === t || rest.startsWith(`${t} `));
    if (type) {
      o['Node Type'] = type;
      let tail = rest.slice(type.length).trim();
      if (tail.startsWith('on ')) tail = tail.slice(3);
      if (type === 'Foreign Scan') o.Operation = 'Select';
      if (tail !== '') target(tail, TARGET_FIELD[type] ?? null, o);
    } else {
      o['Node Type'] = rest;
    }
  }
  return o;
}

/** "schema.name alias" after " on ": the object, its schema (VERBOSE) and the alias. */
function target(text: string, field: string | null, o: Doc): void {
  const tokens = splitIdentTokens(text);
  if (tokens.length === 0) return;
  if (field === null) {
    o.Alias = unquoteIdent(tokens.join(' '));
    return;
  }
  const parts = splitQualified(tokens[0]!);
  const name = unquoteIdent(parts[parts.length - 1]!);
  o[field] = name;
  if (parts.length > 1) o.Schema = parts.slice(0, -1).map(unquoteIdent).join('.');
  o.Alias = tokens.length > 1 ? unquoteIdent(tokens.slice(1).join(' ')) : name;
}

// ---------------------------------------------------------------------------------------------------
// Detail lines

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** "shared hit=1 read=2, local ..., temp read=3 written=4" */
function readBuffersText(value: string, target: Doc): void {
  for (const segment of value.split(',')) {
    const m = /^\s*(shared|local|temp)\s+(.*)$/.exec(segment);
    if (!m) continue;
    for (const [, op, n] of m[2]!.matchAll(/(hit|read|dirtied|written)=(\d+)/g)) target[`${cap(m[1]!)} ${cap(op!)} Blocks`] = Number(n);
  }
}

/**
 * Three generations of syntax: "read=1.2 write=3.4" (up to 14), "shared/local read=.., temp read=.."
 * (15, 16) and "shared read=.., local read=.., temp read=.." (17 and later). Returns the keys it set,
 * plus the marker "shared/local" for the middle generation.
 */
function readIoTimingsText(value: string, target: Doc): string[] {
  const set: string[] = [];
  for (const segment of value.split(',')) {
    const m = /^\s*(shared\/local|shared|local|temp)?\s*(.*)$/.exec(segment);
    if (!m) continue;
    const scope = m[1];
    const prefix = scope === 'temp' ? 'Temp I/O' : scope === 'shared' ? 'Shared I/O' : scope === 'local' ? 'Local I/O' : 'I/O';
    if (scope === 'shared/local') set.push('shared/local');
    for (const [, op, n] of m[2]!.matchAll(/(read|write)=(\d+(?:\.\d+)?)/g)) {
      const key = `${prefix} ${cap(op!)} Time`;
      target[key] = Number(n);
      set.push(key);
    }
  }
  return set;
}

function readWalText(value: string, target: Doc): void {
  const names: Record<string, string> = { records: 'WAL Records', fpi: 'WAL FPI', bytes: 'WAL Bytes', 'buffers full': 'WAL Buffers Full' };
  for (const [, k, n] of value.matchAll(/(records|fpi|bytes|buffers full)=(\d+)/g)) target[names[k!]!] = Number(n);
}

/** "quicksort  Memory: 25kB", "external merge  Disk: 1151688kB", "top-N heapsort  Memory: 50kB". */
function readSortMethod(value: string, target: Doc): void {
  const m = /^(.*?)\s+(\w+):\s+(-?\d+)kB$/.exec(value.trim());
  if (m) {
    target['Sort Method'] = m[1];
    target['Sort Space Used'] = Number(m[3]);
    target['Sort Space Type'] = m[2];
  } else {
    target['Sort Method'] = value.trim();
  }
}

/** "Buckets: 1024 (originally 512)  Batches: 4 (originally 1)  Memory Usage: 35kB" */
function readBuckets(text: string, target: Doc): void {
  const m = /Buckets:\s+(\d+)(?:\s+\(originally (\d+)\))?\s+Batches:\s+(\d+)(?:\s+\(originally (\d+)\))?(?:\s+Memory Usage:\s+(\d+)kB)?/.exec(text);
  if (!m) {
    target.Buckets = text.replace(/^Buckets:\s*/, '');
    return;
  }
  target['Hash Buckets'] = Number(m[1]);
  target['Original Hash Buckets'] = Number(m[2] ?? m[1]);
  target['Hash Batches'] = Number(m[3]);
  target['Original Hash Batches'] = Number(m[4] ?? m[3]);
  if (m[5] !== undefined) target['Peak Memory Usage'] = Number(m[5]);
}

/** "Planned Partitions: 32  Batches: 193  Memory Usage: 4153kB  Disk Usage: 31752kB" (HashAggregate). */
function readHashAgg(text: string, target: Doc): void {
  const pick = (re: RegExp): number | undefined => {
    const m = re.exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const planned = pick(/Planned Partitions:\s+(\d+)/);
  const batches = pick(/Batches:\s+(\d+)/);
  const memory = pick(/Memory Usage:\s+(\d+)kB/);
  const disk = pick(/Disk Usage:\s+(\d+)kB/);
  if (planned !== undefined) target['Planned Partitions'] = planned;
  if (batches !== undefined) target['HashAgg Batches'] = batches;
  if (memory !== undefined) target['Peak Memory Usage'] = memory;
  if (disk !== undefined) target['Disk Usage'] = disk;
}

/** "Full-sort Groups: 2  Sort Method: quicksort  Average Memory: 27kB  Peak Memory: 27kB" */
function readSortGroups(text: string, target: Doc): void {
  const m = /^(Full-sort|Pre-sorted) Groups:\s+(\d+)\s+Sort Methods?:\s+(.*?)(?=\s{2,}Average|$)/.exec(text.trim());
  if (!m) return;
  const group: Doc = { 'Group Count': Number(m[2]), 'Sort Methods Used': m[3]!.split(', ').map((s) => s.trim()) };
  for (const space of ['Memory', 'Disk']) {
    const s = new RegExp(`Average ${space}:\\s+(\\d+)kB\\s+Peak ${space}:\\s+(\\d+)kB`).exec(text);
    if (s) group[`Sort Space ${space}`] = { 'Average Sort Space Used': Number(s[1]), 'Peak Sort Space Used': Number(s[2]) };
  }
  target[`${m[1]} Groups`] = group;
}

/** "Hits: 19949  Misses: 50  Evictions: 0  Overflows: 0  Memory Usage: 6kB" (Memoize). */
function readMemoize(text: string, target: Doc): void {
  for (const [, k, n] of text.matchAll(/(Hits|Misses|Evictions|Overflows):\s+(\d+)/g)) target[`Cache ${k}`] = Number(n);
  const mem = /Memory Usage:\s+(\d+)kB/.exec(text);
  if (mem) target['Peak Memory Usage'] = Number(mem[1]);
}

/** "Storage: Memory  Maximum Storage: 17kB" (Materialize, CTE Scan, WindowAgg; 18 and later). */
function readStorage(text: string, target: Doc): void {
  const m = /^Storage:\s+(\S+)(?:\s+Maximum Storage:\s+(\d+)kB)?/.exec(text);
  if (!m) return;
  target.Storage = m[1];
  if (m[2] !== undefined) target['Maximum Storage'] = Number(m[2]);
}

/** The three lines of a JIT block: Functions, Options, Timing. */
function readJitLine(key: string, value: string, jit: Doc): void {
  if (key === 'Functions') jit.Functions = num(value) ?? value;
  else if (key === 'Options') {
    const options: Doc = {};
    for (const [, k, v] of value.matchAll(/(\w+) (true|false)/g)) options[k!] = v === 'true';
    jit.Options = options;
  } else if (key === 'Timing') {
    const timing: Doc = {};
    for (const part of splitTopLevel(value)) {
      const m = /^(\w+) (\d+(?:\.\d+)?) ms(?: \((\w+) (\d+(?:\.\d+)?) ms\))?$/.exec(part);
      if (!m) continue;
      // From 17 the deform time is printed inside Generation, as the JSON format's Generation group.
      timing[m[1]!] = m[3] !== undefined ? { [m[3]]: Number(m[4]), Total: Number(m[2]) } : Number(m[2]);
    }
    jit.Timing = timing;
  } else jit[key] = value;
}

/** "work_mem = '64kB', search_path = '"$user", public'" into a map; values may hold commas. */
function readSettings(value: string): Doc {
  const out: Doc = {};
  for (const m of value.matchAll(/([A-Za-z_][\w.]*) = (?:'(.*?)'|(NULL))(?=, [A-Za-z_][\w.]* = |$)/g)) {
    out[m[1]!] = m[2] ?? 'NULL';
  }
  return out;
}

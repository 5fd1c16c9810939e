// The queries of one script, kept per top-level statement and re-read only where an edit touched.

import { parse as babelParse, type ParserOptions, type ParserPlugin } from '@babel/parser';
import { CALLS_OF, Extractor, forgetMutations, type CallReader, type WalkTrace } from './extractor';
import { DB_HOLDS_COLLECTIONS, mongoCalls, showsDbHoldingCollections } from './mongoDriver';
import { mongooseCalls } from './mongoose';
import { prismaCalls, PRISMA_CLIENT, showsPrismaClient } from './prisma';
import { knexCalls } from './knex';
import { sequelizeCalls } from './sequelize';
import { typeormCalls } from './typeorm';
import { pgQueryCalls, sqlTags, sqlWrapperCalls } from './sqlStrings';
import { IncrementalIndex } from './incremental';
import { changeBounds, detached, QueryPositions, type KnownChange, type TouchedSpan } from './ranges';
import { collectMutations, declareStatements, ModuleScope, type Binding } from './scope';
import { pushChildren, type BNode } from './syntax';
import type { FindResult, FinderContext, FoundQuery, ScriptDialect } from './types';

interface Chunk {
  start: number;
  end: number;
  /** The top-level statement's tree (offsets into the file as it was when it was parsed). */
  node: BNode;
  /** Names this statement declares at module level. */
  declares: Map<string, Binding>;
  mutates: Set<string>;
  /** Fields it assigns (`self.db = ...`), by "name.field". */
  fields: [string, BNode][];
  /** Facts about the file this statement shows (FILE_FACTS). */
  shows: Set<string>;
  /** Module-level names its queries looked up (found or not). */
  uses: Set<string>;
  queries: FoundQuery[];
  /** Every position its queries hold, to move them after an edit. */
  positions: QueryPositions;
  /** The file text of the statement, to tell whether it changed. */
  text: string;
  /** How far the statement moved since its tree's offsets were last brought up to date. */
  pending: number;
  /** What reading it left for reading one of its statements again (see Extractor.runInside). */
  trace: WalkTrace | undefined;
}

/** A statement around an edit, parsed again (readInside). */
interface Inside {
  node: BNode;
  list: BNode[];
  index: number;
  path: BNode[];
  fresh: BNode;
  before: Changes;
  after: Changes;
  stays: { kept: FoundQuery[]; trace: WalkTrace } | undefined;
}

/** One statement of a chunk read again alone (readInside), with what stays of the chunk's last reading. */
interface InnerRead {
  chunk: Chunk;
  path: BNode[];
  statement: BNode;
  /** The queries read from calls outside the statement, and what their reading left. */
  kept: FoundQuery[];
  trace: WalkTrace;
  /** The old chunk's positions, to move the kept queries by the edit. */
  positions: QueryPositions;
}


/** The readers of each library, in the order they are asked about a call. */
const READERS: readonly CallReader[] = [sqlTags, prismaCalls, pgQueryCalls, knexCalls, mongoCalls, typeormCalls, sequelizeCalls, mongooseCalls, sqlWrapperCalls];

/** Facts about a file that a statement can show, with the test of one node that shows each. */
const FILE_FACTS: readonly [string, (n: BNode) => boolean][] = [[DB_HOLDS_COLLECTIONS, showsDbHoldingCollections], [PRISMA_CLIENT, showsPrismaClient]];

export const BABEL_PLUGINS: Record<ScriptDialect, ParserPlugin[]> = {
  ts: ['typescript', 'decorators-legacy'],
  tsx: ['typescript', 'jsx', 'decorators-legacy'],
  js: ['jsx', 'decorators-legacy'],
};

/**
 * How a script is parsed to find queries in it: leniently, as a file being typed or a slice of one
 * (errors recovered, statements allowed wherever a slice may put them).
 */
export function scriptParseOptions(dialect: ScriptDialect, startIndex = 0): ParserOptions {
  return {
    sourceType: 'unambiguous',
    startIndex,
    errorRecovery: true,
    attachComment: false,
    allowReturnOutsideFunction: true,
    allowAwaitOutsideFunction: true,
    allowImportExportEverywhere: true,
    allowUndeclaredExports: true,
    allowNewTargetOutsideFunction: true,
    allowSuperOutsideMethod: true,
    plugins: BABEL_PLUGINS[dialect],
  };
}

/**
 * The queries of one script, kept per top-level statement. `update(text)` re-reads only what an edit
 * touched: the statements overlapping the changed span, and the statements whose queries used a
 * module-level name that the changed statements declare or mutate.
 */
export class ScriptQueryIndex extends IncrementalIndex<Chunk> {
  private readonly module = new ModuleScope();
  /**
   * What the last update did: statements parsed again, statements read again, whether the whole file was
   * read, whether the statement parsed again was one inside a top-level statement, and whether it was
   * also read alone (see readInside).
   */
  lastUpdate = { reparsed: 0, reextracted: 0, full: true, inner: false, alone: false };
  /** Why the last region read again did not parse. */
  private regionError = '';
  /** Whether the whole file may read where the touched region did not (see regionUnreadable). */
  private regionMayReadWhole = true;
  /** How many statements the last region read again held. */
  private parsedInRegion = 0;

  constructor(private readonly kind: 'mongodb-playground' | 'script', private readonly dialect: ScriptDialect = 'ts', private context: FinderContext = {}) {
    super();
  }

  /**
   * What is known beyond the text changed (the workspace's Prisma models, its modules): the statements are
   * read again with it (not parsed again). Nothing is read again when every part is the same.
   */
  setContext(context: FinderContext): void {
    const was = this.context;
    if (was.prismaModels === context.prismaModels && was.entities === context.entities && was.file === context.file && was.modules === context.modules) return;
    this.context = context;
    this.readAgain();
  }

  /** Reads every statement again (not parsing it again): what they follow changed (the context, another file saved). */
  readAgain(): void {
    for (const c of this.pieces) this.extract(c);
  }

  result(): FindResult {
    const queries: FoundQuery[] = [];
    for (const c of this.pieces) queries.push(...c.queries);
    return { queries, warnings: [...this.warnings] };
  }

  override update(text: string, known?: KnownChange): void {
    if (this.mustReadAll() || this.warnings.length > 0) {
      super.update(text, known);
      return;
    }
    // The texts are compared once: what changed is handed on as known to the reading by top-level statements.
    const { p, oldEnd } = changeBounds(this.text, text, known);
    if (this.readInside(text, p, oldEnd)) return;
    super.update(text, { p, suffix: this.text.length - oldEnd });
  }

  /** Whether the splice under way came from readInside. */
  private readingInside = false;
  /** The statement readInside found can be read alone, in place of its whole top-level statement. */
  private inner: InnerRead | undefined;

  /**
   * An edit inside one large top-level statement (a file wrapped in `module.exports = (app) => { ... }`,
   * a test file that is one `describe(...)`): only the innermost statement around the edit that parses
   * alone to the same extent is parsed again, and put in the old tree in place of the old one. The
   * top-level statement is then read as if it had been parsed whole (its names, and its queries with the
   * scopes around them), so what is found is what reading the file again finds; parsing, the larger part
   * of the cost, is done for the small statement only. False when no such statement is found.
   */
  private readInside(text: string, p: number, oldEnd: number): boolean {
    const delta = text.length - this.text.length;
    const i = this.pieces.findIndex((c) => c.start < p && oldEnd < c.end);
    const c = i < 0 ? undefined : this.pieces[i]!;
    if (!c || c.end - c.start < INNER_MIN_LENGTH) return false;
    flushChunk(c);
    const callees = [...calleesOf([c])];
    // The innermost statement that parses alone; or, when what it declares or sits in makes reading it
    // alone unsafe, the innermost around it that can be read alone, if one is not too long to be worth it.
    let chosen: Inside | undefined;
    for (const { node, list, index, path } of statementsAround(c.node, p, oldEnd)) {
      if (chosen && node.end - node.start > INNER_MAX_SEARCH) break;
      const newEnd = node.end + delta;
      if (!endsAlone(text, node, newEnd)) continue;
      const parsed = this.parse(detached(text.slice(node.start, newEnd)), node.start);
      if (!parsed.ok || parsed.statements.length !== 1) continue;
      const fresh = parsed.statements[0]!;
      if (fresh.start !== node.start || fresh.end !== newEnd) continue;
      const before = changesIn(node, this.text);
      const after = changesIn(fresh, text);
      const same = before.signature === after.signature;
      // What stays of the last reading if only this statement is read again (decided on the old offsets);
      // nothing when it mentions a function or class whose calls named queries of the statement around it.
      const named = callees.some((n) => mentions(this.text.slice(node.start, node.end), n) || mentions(text.slice(node.start, newEnd), n));
      const stays = same && !named && c.trace && readsAlone(c.trace, path, node, fresh) ? keptOutside(c, node) : undefined;
      const found: Inside = { node, list, index, path, fresh, before, after, stays };
      chosen ??= found;
      if (stays) chosen = found;
      // A statement around this one holds the same change to what it assigns: none is read alone.
      if (stays || !same) break;
    }
    if (!chosen) return false;
    const { node, list, index, path, fresh, before, after, stays } = chosen;
    const same = before.signature === after.signature;
    moveAround(c.node, node, delta);
    list[index] = fresh;
    forgetMutations(path);
    const region = detached(text.slice(c.start, c.end + delta));
    // When the statement changes what it changed before (the same assignments and names, word for
    // word), the top-level statement's names, fields and facts are the old ones, its fields now read
    // from the new tree; otherwise they are collected again from the whole of it.
    const chunk = (same ? withInner(c, region, before.fields, after.fields) : undefined) ?? this.makeChunk(c.node, region, c.start);
    this.parsedInRegion = 1;
    this.readingInside = true;
    // The names the other statements' queries used stay used: a superset only reads more again.
    if (stays) chunk.uses = new Set(c.uses);
    this.inner = stays && { chunk, path, statement: fresh, ...stays, positions: c.positions };
    try {
      this.splice(text, { first: i, last: i, from: c.start, to: c.end + delta, delta, p, oldEnd }, [chunk]);
    } finally {
      this.readingInside = false;
      this.inner = undefined;
    }
    return true;
  }

  protected mustReadAll(): boolean {
    return this.pieces.length === 0 || this.text === '';
  }

  protected override unchanged(): void {
    this.lastUpdate = { reparsed: 0, reextracted: 0, full: false, inner: false, alone: false };
  }

  protected readRegion(slice: string, offset: number, span: TouchedSpan): Chunk[] | undefined {
    const parsed = this.parse(slice, offset);
    if (!parsed.ok) {
      this.regionError = parsed.error;
      // The region starts where a top-level statement starts, as the whole file's reading does there: an
      // error that is not an unclosed template, comment or string, met before the region's last token,
      // is met by the whole file's reading too. Only an error at the region's end (what follows may
      // close it) or an unclosed span (it may close in a later statement) can read differently whole.
      const lastToken = offset + slice.trimEnd().length;
      this.regionMayReadWhole = parsed.at === undefined || parsed.at >= lastToken - 1 || /unterminated/i.test(parsed.error);
      return undefined;
    }
    this.parsedInRegion = parsed.statements.length;
    // Chunks keep their own text; the file text they sit in is the slice, placed at its offset. A
    // statement the edit did not change is the old chunk, with its tree and its queries.
    return parsed.statements.map((n) => this.unchangedPiece(span, slice, offset, n.start, n.end) ?? this.makeChunk(n, slice, offset));
  }

  protected regionUnreadable(text: string, span: TouchedSpan): void {
    // The edit left this part unreadable (an unclosed bracket, a comment opened): the whole file may
    // still read (a template or comment now spans statements); if not, keep the other statements.
    const whole = this.regionMayReadWhole ? this.parse(text, 0) : undefined;
    if (whole?.ok) {
      this.fullFrom(text, whole.statements);
      return;
    }
    this.splice(text, span, []);
    this.warnings = [this.regionError];
  }

  protected move(c: Chunk, delta: number): void {
    shiftChunk(c, delta);
  }

  /** Re-reads what depended on the change: the new statements and those using a name they declare or mutate. */
  protected spliced(removed: Chunk[], added: Chunk[], span: TouchedSpan): void {
    this.warnings = [];
    const changed = new Set<string>();
    const replaced = replacedStatements(removed, added);
    for (const c of replaced) {
      for (const n of c.declares.keys()) changed.add(n);
      for (const n of c.mutates) changed.add(n);
    }
    // A statement whose queries the calls of a function or class of this file named is read again when
    // an edited statement mentions that name (a call of it may have changed what it is given).
    for (const name of calleesOf(this.pieces)) if (replaced.some((c) => mentions(c.text, name))) changed.add(CALLS_OF + name);
    const shown = new Set(this.module.shows);
    this.rebuildModule();
    // Statements that asked for a fact about the file are read again when the file starts or stops showing
    // it, not each time a statement showing it is edited (most of a file may show it).
    for (const [fact] of FILE_FACTS) if (shown.has(fact) !== this.module.shows.has(fact)) changed.add(fact);
    let reextracted = 0;
    const isNew = new Set(added);
    for (const c of this.pieces) {
      if (c === this.inner?.chunk) {
        this.extractInner(this.inner, span);
        reextracted++;
      } else if (isNew.has(c) || usesAny(c.uses, changed)) {
        this.extract(c);
        reextracted++;
      } else {
        // Results of untouched statements may point into later statements (a module constant declared
        // further down): those positions move with the text after the edit.
        c.positions.shift(span.delta, span.oldEnd);
      }
    }
    this.lastUpdate = { reparsed: this.parsedInRegion, reextracted, full: false, inner: this.readingInside, alone: this.inner !== undefined };
  }

  protected readAll(text: string): void {
    const parsed = this.parse(text, 0);
    if (!parsed.ok) {
      this.text = text;
      this.pieces = [];
      this.warnings = [parsed.error];
      this.rebuildModule();
      this.lastUpdate = { reparsed: 0, reextracted: 0, full: true, inner: false, alone: false };
      return;
    }
    this.fullFrom(text, parsed.statements);
  }

  private fullFrom(text: string, statements: BNode[]): void {
    this.text = text;
    this.warnings = [];
    this.pieces = statements.map((n) => this.makeChunk(n, text, 0));
    this.rebuildModule();
    for (const c of this.pieces) this.extract(c);
    this.lastUpdate = { reparsed: this.pieces.length, reextracted: this.pieces.length, full: true, inner: false, alone: false };
  }

  private parse(slice: string, offset: number): { ok: true; statements: BNode[] } | { ok: false; error: string; at?: number } {
    try {
      const file = babelParse(slice, scriptParseOptions(this.kind === 'script' ? this.dialect : 'js', offset)) as unknown as { program: { body: BNode[] } };
      return { ok: true, statements: file.program.body };
    } catch (err) {
      if (err instanceof RangeError) return { ok: false, error: 'The file is nested too deeply to read.' };
      if (!(err instanceof SyntaxError)) throw err;
      const pos = (err as SyntaxError & { pos?: number }).pos;
      const msg = err.message.replace(/\s*\(\d+:\d+\)$/, '').replace(/\.$/, '');
      return { ok: false, error: `The file does not parse${typeof pos === 'number' ? ` at offset ${pos}` : ''}: ${msg}.`, ...(typeof pos === 'number' ? { at: pos } : {}) };
    }
  }

  /** `text` is the file text from `offset` on (a region being read again, or the whole file). */
  private makeChunk(node: BNode, text: string, offset: number): Chunk {
    const declares = new Map<string, Binding>();
    declareStatements([node], declares);
    const mutates = new Set<string>();
    const fields: [string, BNode][] = [];
    const shows = new Set<string>();
    collectMutations(node, mutates, fields, showsFacts(shows));
    // `User.init(...)` configures what `User` is: statements reading User are read again when it changes.
    const call = topLevelCall(node);
    if (call?.key.endsWith('.init')) mutates.add(call.name);
    return { start: node.start, end: node.end, node, declares, mutates, fields, shows, uses: new Set(), queries: [], positions: NO_POSITIONS, text: text.slice(node.start - offset, node.end - offset), pending: 0, trace: undefined };
  }

  private rebuildModule(): void {
    this.module.statements ??= () => this.pieces.map((c) => {
      flushChunk(c);
      return c.node;
    });
    this.module.names.clear();
    this.module.mutated.clear();
    this.module.owner.clear();
    this.module.calls.clear();
    this.module.classes.clear();
    this.module.fields.clear();
    this.module.shows.clear();
    for (const c of this.pieces) {
      for (const f of c.shows) this.module.shows.add(f);
      for (const [k, v] of c.fields) {
        const list = this.module.fields.get(k) ?? [];
        list.push({ node: v, flush: () => flushChunk(c) });
        this.module.fields.set(k, list);
      }
      for (const [k, v] of c.declares) {
        this.module.names.set(k, this.module.names.has(k) ? { unknown: true } : v);
        this.module.owner.set(k, { flush: () => flushChunk(c) });
      }
      for (const m of c.mutates) this.module.mutated.add(m);
      const call = topLevelCall(c.node);
      if (call) this.module.calls.set(call.key, { node: call.node, flush: () => flushChunk(c) });
      const cls = c.node.type === 'ClassDeclaration' ? c.node : (c.node.type === 'ExportNamedDeclaration' || c.node.type === 'ExportDefaultDeclaration') && c.node.declaration?.type === 'ClassDeclaration' ? c.node.declaration : undefined;
      if (cls?.id?.name) this.module.classes.set(cls.id.name, { node: cls, flush: () => flushChunk(c) });
    }
  }

  private extract(c: Chunk): void {
    flushChunk(c);
    c.uses = new Set();
    const ex = new Extractor(this.text, this.module, c.uses, c.mutates, this.kind, READERS, this.context);
    c.queries = ex.run(c.node);
    c.positions = new QueryPositions(c.queries);
    c.trace = ex.trace();
  }

  /**
   * Reads one statement of a chunk again, in the scopes around it: its queries replace those read from
   * calls inside it before; the others stay, moved by the edit.
   */
  private extractInner(r: InnerRead, span: TouchedSpan): void {
    const c = r.chunk;
    r.positions.shift(span.delta, span.oldEnd);
    const ex = new Extractor(this.text, this.module, c.uses, c.mutates, this.kind, READERS, this.context);
    const read = ex.runInside(r.path, r.statement, r.trace);
    c.queries = [...r.kept, ...read].sort((a, b) => a.range.start - b.range.start);
    c.positions = new QueryPositions(c.queries);
    c.trace = ex.trace();
  }
}

const NO_POSITIONS = new QueryPositions([]);

/**
 * The chunk `c` once one of its statements was parsed again without changing what it assigns: its fields
 * `oldFields` become `newFields`. Undefined if they are not found where they should be.
 */
function withInner(c: Chunk, region: string, oldFields: [string, BNode][], newFields: [string, BNode][]): Chunk | undefined {
  let fields = c.fields;
  if (oldFields.length > 0) {
    // A statement's fields are one run of the chunk's (see changesIn).
    const first = oldFields[0]![1];
    const at = c.fields.findIndex(([, v]) => v === first);
    if (at < 0 || oldFields.some(([, v], k) => c.fields[at + k]?.[1] !== v)) return undefined;
    fields = [...c.fields.slice(0, at), ...newFields, ...c.fields.slice(at + oldFields.length)];
  }
  const declares = new Map<string, Binding>();
  declareStatements([c.node], declares);
  return { ...c, end: c.start + region.length, declares, fields, uses: new Set(), queries: [], positions: NO_POSITIONS, text: region, pending: 0, trace: undefined };
}

/** Nodes a statement can sit in and still be reached by no name: blocks, control flow, calls and their arguments. */
const OPEN_AROUND = new Set(['ExpressionStatement', 'BlockStatement', 'IfStatement', 'ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement',
  'DoWhileStatement', 'TryStatement', 'CatchClause', 'SwitchStatement', 'SwitchCase', 'LabeledStatement', 'ReturnStatement', 'CallExpression',
  'OptionalCallExpression', 'NewExpression', 'AwaitExpression', 'MemberExpression', 'OptionalMemberExpression', 'ArrayExpression', 'ObjectExpression',
  'ObjectProperty', 'ConditionalExpression', 'LogicalExpression', 'SequenceExpression', 'ParenthesizedExpression', 'ExportDefaultDeclaration',
  // A function in these is reached by no name: a name holding it (a declaration, an assignment) is not among them.
  'ArrowFunctionExpression', 'FunctionExpression', 'ObjectMethod',
  // A class's methods are not followed by the readers (`this.list()` is not read through); its fields are,
  // and those the constructor assigns are in the statement's signature.
  'ClassDeclaration', 'ClassExpression', 'ClassBody', 'ClassMethod', 'ClassPrivateMethod', 'StaticBlock', 'ExportNamedDeclaration']);

/**
 * Whether a statement read alone gives what reading its whole top-level statement gives. Queries outside
 * it may read inside it in three ways, each ruled out here: through a name it declares (it declares
 * none, before and after the edit); through what it assigns or pushes (changesIn's signature, compared by
 * the caller); through a function or value holding it that some name reaches (every node around it is a
 * block, control flow, a call, a callback given to a call, or `module.exports = ...`). And a call around it
 * that a reader took (a builder's callback) read it as part of its own query.
 */
function readsAlone(trace: WalkTrace, path: readonly BNode[], old: BNode, fresh: BNode): boolean {
  const names = new Map<string, Binding>();
  declareStatements([old, fresh], names);
  if (names.size > 0) return false;
  for (let i = 0; i < path.length; i++) {
    const n = path[i]!;
    if (OPEN_AROUND.has(n.type)) continue;
    if (n.type === 'AssignmentExpression' && n.operator === '=' && isModuleExports(n.left!)) continue;
    return false;
  }
  const around = (n: BNode) => n.start <= old.start && old.end <= n.end;
  return !trace.taken.some(around) && ![...trace.consumed].some(around);
}

/** `module.exports`, `module.exports.x`, `exports.x`. */
function isModuleExports(e: BNode): boolean {
  if (e.type !== 'MemberExpression') return false;
  const obj = e.object!;
  if (obj.type === 'Identifier') return (obj.name === 'module' && e.property?.name === 'exports') || obj.name === 'exports';
  return isModuleExports(obj);
}

/** The queries of chunk `c` read from calls outside `statement`, and what their reading left (offsets of the old text). */
function keptOutside(c: Chunk, statement: BNode): { kept: FoundQuery[]; trace: WalkTrace } {
  const inside = (n: BNode) => statement.start <= n.start && n.end <= statement.end;
  const t = c.trace!;
  const kept = c.queries.filter((q) => {
    const from = t.producers.get(q);
    return from !== undefined && !inside(from);
  });
  const keep = new Set(kept);
  const producers = new Map([...t.producers].filter(([q]) => keep.has(q)));
  const byNode = new Map([...t.byNode].filter(([, q]) => keep.has(q)));
  return { kept, trace: { producers, taken: t.taken.filter((n) => !inside(n)), consumed: new Set([...t.consumed].filter((n) => !inside(n))), byNode } };
}

/** A visitor adding to `shows` the facts about the file (FILE_FACTS) a node shows. */
function showsFacts(shows: Set<string>): (n: BNode) => void {
  return (n) => {
    for (const [fact, test] of FILE_FACTS) if (!shows.has(fact) && test(n)) shows.add(fact);
  };
}

/**
 * What a statement changes, as one string (the text of each assignment, `x.push(...)`, ..., in the order
 * of the walk, and the facts about the file it shows), and the fields it assigns, in the order
 * collectMutations gives them for a tree holding it: a statement's subtree is walked in one go, so its
 * fields are one run of that list.
 */
type Changes = { signature: string; fields: [string, BNode][] };

function changesIn(statement: BNode, text: string): Changes {
  const fields: [string, BNode][] = [];
  const shows = new Set<string>();
  const written: BNode[] = [];
  // Names declared inside it too: one declared in an inner block hides an outer one from what scans for
  // the outer one's values (Extractor.writesTo).
  const declared: BNode[] = [];
  const facts = showsFacts(shows);
  collectMutations(statement, new Set(), fields, (n) => {
    facts(n);
    if (n.type === 'VariableDeclarator' && n.id) declared.push(n.id);
    else if (n.params) declared.push(...n.params);
    else if (n.type === 'CatchClause' && n.param) declared.push(n.param);
    if ((n.type === 'FunctionDeclaration' || n.type === 'ClassDeclaration' || n.type === 'FunctionExpression') && n.id) declared.push(n.id);
  }, written);
  const slices = (ns: BNode[]) => ns.map((n) => text.slice(n.start, n.end));
  const signature = [...slices(written), '\u0001', ...slices(declared), '\u0001', ...[...shows].sort()].join('\u0000');
  return { signature, fields };
}

/** Top-level statements shorter than this are parsed again whole: parsing them costs little. */
const INNER_MIN_LENGTH = 2000;
/** How long a statement around the innermost one may be and still be parsed again to be read alone. */
const INNER_MAX_SEARCH = 16_000;

/**
 * The statements of a list (a block's, a switch case's) that hold the changed span [p, oldEnd) strictly
 * inside, innermost first, each with the nodes from the root down to its parent.
 */
function statementsAround(root: BNode, p: number, oldEnd: number): { node: BNode; list: BNode[]; index: number; path: BNode[] }[] {
  const out: { node: BNode; list: BNode[]; index: number; path: BNode[] }[] = [];
  const chain: BNode[] = [];
  const kids: BNode[] = [];
  let x: BNode | undefined = root;
  while (x) {
    chain.push(x);
    kids.length = 0;
    pushChildren(x, kids);
    const inner: BNode | undefined = kids.find((k) => k.start < p && oldEnd < k.end);
    if (!inner) break;
    const list = statementList(x);
    const index = list ? list.indexOf(inner) : -1;
    if (index >= 0) out.push({ node: inner, list: list!, index, path: [...chain] });
    x = inner;
  }
  return out.reverse();
}

function statementList(n: BNode): BNode[] | undefined {
  if ((n.type === 'BlockStatement' || n.type === 'StaticBlock') && Array.isArray(n.body)) return n.body;
  if (n.type === 'SwitchCase') return (n as unknown as { consequent: BNode[] }).consequent;
  return undefined;
}

/** Statements that end with their own closing brace: nothing on the next line can continue them. */
const CLOSED_BY_BRACE = new Set(['BlockStatement', 'IfStatement', 'ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'TryStatement', 'SwitchStatement', 'FunctionDeclaration', 'ClassDeclaration']);
/** Words that continue an expression on the next line. */
const CONTINUING_WORDS = new Set(['in', 'instanceof', 'of', 'as', 'satisfies']);

/**
 * Whether a statement ending at `end` of `text` ends there whatever its inside holds: it ends with `;`
 * or its own `}`, or what follows (past spaces and comments) cannot continue it (`}`, a word, a string,
 * a number, the end of the file). Otherwise the text after it could have been part of it (a line
 * starting with `(` or `.` after a statement without a semicolon), and it is not parsed alone.
 */
function endsAlone(text: string, node: BNode, end: number): boolean {
  const last = text.charCodeAt(end - 1);
  if (last === 0x3b /* ; */ || (last === 0x7d /* } */ && CLOSED_BY_BRACE.has(node.type))) return true;
  let i = end;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith('//', i)) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return false;
      i = close + 2;
    } else break;
  }
  if (i >= text.length) return true;
  const ch = text[i]!;
  if (ch === '}' || ch === "'" || ch === '"' || /[0-9]/.test(ch)) return true;
  const word = /^[A-Za-z_$][\w$]*/.exec(text.slice(i, i + 16))?.[0];
  return word !== undefined && !CONTINUING_WORDS.has(word);
}

/**
 * Moves the tree of a top-level statement for an edit inside `inner`, one of its statements, which
 * changed length by `delta`: the statements and expressions around it end `delta` later, and everything
 * after it moves by `delta`. What lies before it is not visited.
 */
function moveAround(root: BNode, inner: BNode, delta: number): void {
  if (delta === 0) return;
  const { start, end } = inner;
  const stack: BNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n === inner || n.end <= start) continue;
    if (n.start >= end) {
      n.start += delta;
      n.end += delta;
    } else n.end += delta;
    pushChildren(n, stack);
  }
}

/** The functions and classes of the file whose calls named the statements' queries (Extractor.usesCallsOf). */
function calleesOf(chunks: readonly Chunk[]): Set<string> {
  const out = new Set<string>();
  for (const c of chunks) for (const u of c.uses) if (u.startsWith(CALLS_OF)) out.add(u.slice(CALLS_OF.length));
  return out;
}

/** Whether `text` holds `name` as a whole word of code (not inside a longer name). */
function mentions(text: string, name: string): boolean {
  const part = /[\w$]/;
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1)) {
    if (!part.test(text[i - 1] ?? ' ') && !part.test(text[i + name.length] ?? ' ')) return true;
  }
  return false;
}

function usesAny(uses: ReadonlySet<string>, changed: ReadonlySet<string>): boolean {
  if (changed.size === 0) return false;
  for (const n of uses) if (changed.has(n)) return true;
  return false;
}

/**
 * The statements an edit really replaced. The region read again reaches to the untouched statements on
 * either side, which come back with the same text: what they declare is unchanged, so the statements
 * using it need not be read again (editing a function next to `const orders = db.collection(...)`
 * would otherwise read every statement of the file that uses `orders`). Counted as multisets, so a
 * statement written twice and then once still counts as a change.
 */
function replacedStatements(removed: Chunk[], added: Chunk[]): Chunk[] {
  const unmatched = new Map<string, Chunk[]>();
  for (const c of removed) unmatched.set(c.text, [...(unmatched.get(c.text) ?? []), c]);
  const out: Chunk[] = [];
  for (const c of added) {
    const same = unmatched.get(c.text);
    if (same && same.length > 0) same.pop();
    else out.push(c);
  }
  for (const left of unmatched.values()) out.push(...left);
  return out;
}

/**
 * Moves a statement by `delta` (the edit happened before it). Its tree is moved only when it is read
 * again (flushChunk): most statements never are, and walking every tree after each keystroke would cost
 * more than the rest of the update.
 */
function shiftChunk(c: Chunk, delta: number): void {
  if (delta === 0) return;
  c.start += delta;
  c.end += delta;
  c.pending += delta;
}

function flushChunk(c: Chunk): void {
  const delta = c.pending;
  if (delta === 0) return;
  c.pending = 0;
  const stack: BNode[] = [c.node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    n.start += delta;
    n.end += delta;
    pushChildren(n, stack);
  }
}

/** A statement `name.method(...)` (awaited or not), as "name.method" with the call. */
function topLevelCall(n: BNode): { key: string; name: string; node: BNode } | undefined {
  let e = n.type === 'ExpressionStatement' ? n.expression : undefined;
  if (e?.type === 'AwaitExpression') e = e.argument;
  if (!e || (e.type !== 'CallExpression' && e.type !== 'OptionalCallExpression')) return undefined;
  const callee = e.callee;
  if (!callee || callee.type !== 'MemberExpression' || callee.computed || callee.object?.type !== 'Identifier' || callee.property?.type !== 'Identifier') return undefined;
  return { key: `${callee.object.name}.${callee.property.name}`, name: callee.object.name!, node: e };
}

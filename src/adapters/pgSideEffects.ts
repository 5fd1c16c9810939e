// What explaining a PostgreSQL statement could change that the rollback does not undo, found before
// anything runs: from PostgreSQL's own parse tree (libpg-query, read by inspectStatement) the functions,
// operators and relations a statement names, then from the catalog their volatility, the functions of
// the views it reads (recursively), the triggers of the tables it writes, and the column defaults (and
// identity columns) an INSERT fills, with the sequences they advance.
//
// What plain EXPLAIN may evaluate: nothing of the statement runs, but the planner folds IMMUTABLE
// functions with constant arguments and evaluates STABLE ones for its estimates. Built-in functions and
// C-language ones (extensions) are trusted to be what they declare; a user-written one (SQL, PL/pgSQL or
// another procedural language) declared IMMUTABLE or STABLE may call nextval() or write a file if it is
// wrongly declared, so it is reported for plain EXPLAIN too.
//
// Not seen: functions reached only through casts, type input functions, domain or CHECK constraints,
// row-level security policies, rules, foreign-key cascades, or dynamic SQL (query_to_xml). A SELECT
// without side effects runs in a READ ONLY transaction, which the server enforces for what this misses.

import type pg from 'pg';
import { forEachNode, someNode } from '../core/index';

interface NameRef {
  schema: string | null;
  name: string;
}

interface InsertRef {
  rel: string;
  /** The column list, when the INSERT gives one and no value is DEFAULT. */
  cols: string[] | null;
  /** Values per row of an INSERT ... VALUES without a column list (the first columns are given). */
  width: number | null;
}

/** What a statement names that may run code when it is planned or executed. */
export interface StatementReferences {
  functions: NameRef[];
  operators: NameRef[];
  /** Every relation named, as a quoted (schema-)qualified name. */
  relations: string[];
  inserts: InsertRef[];
  /** Tables written by INSERT, UPDATE, DELETE or MERGE, with the trigger events (pg_trigger.tgtype bits) that fire. */
  written: { rel: string; events: number }[];
  /** FOR UPDATE / FOR SHARE: the server refuses these in a READ ONLY transaction. */
  locks: boolean;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function strings(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((x) => (x as { String?: { sval?: string } })?.String?.sval).filter((x): x is string => typeof x === 'string');
}

function nameRef(parts: string[]): NameRef | undefined {
  const name = parts.at(-1);
  if (name === undefined) return undefined;
  return { schema: parts.length > 1 ? parts.at(-2)! : null, name };
}

function relationName(rv: unknown): string | undefined {
  const r = rv as { relname?: string; schemaname?: string } | undefined;
  if (!r?.relname) return undefined;
  return r.schemaname ? `${quoteIdent(r.schemaname)}.${quoteIdent(r.relname)}` : quoteIdent(r.relname);
}

/** True when some node of the tree holds a MERGE's `WHEN ... THEN INSERT` (commandType CMD_INSERT). */
function mergeInserts(clauses: unknown): boolean {
  return someNode(clauses, (o) => o.commandType === 'CMD_INSERT');
}

/** Reads the references out of one statement's parse tree (libpg-query's JSON). */
export function statementReferences(tree: unknown): StatementReferences {
  const refs: StatementReferences = { functions: [], operators: [], relations: [], inserts: [], written: [], locks: false };
  forEachNode(tree, (o) => {
    for (const [k, v] of Object.entries(o)) {
      const node = v as Record<string, unknown>;
      if (k === 'FuncCall') {
        const ref = nameRef(strings(node.funcname));
        if (ref) refs.functions.push(ref);
      } else if (k === 'A_Expr') {
        const ref = nameRef(strings(node.name));
        if (ref) refs.operators.push(ref);
      } else if (k === 'RangeVar') {
        const name = relationName(node);
        if (name) refs.relations.push(name);
      } else if (k === 'LockingClause') {
        refs.locks = true;
      } else if (k === 'InsertStmt' || k === 'UpdateStmt' || k === 'DeleteStmt' || k === 'MergeStmt') {
        const rel = relationName(node.relation);
        if (rel) {
          refs.written.push({ rel, events: triggerEvents(k, node) });
          if (k === 'InsertStmt') refs.inserts.push(insertRef(rel, node));
          // A MERGE may insert into any column: every default counts.
          if (k === 'MergeStmt' && mergeInserts(node.mergeWhenClauses)) refs.inserts.push({ rel, cols: null, width: null });
        }
      }
    }
  });
  return refs;
}

/** pg_trigger.tgtype bits: INSERT 4, DELETE 8, UPDATE 16. */
function triggerEvents(kind: string, node: Record<string, unknown>): number {
  if (kind === 'InsertStmt') return (node.onConflictClause as { action?: string } | undefined)?.action === 'ONCONFLICT_UPDATE' ? 4 | 16 : 4;
  if (kind === 'UpdateStmt') return 16;
  if (kind === 'DeleteStmt') return 8;
  return 4 | 8 | 16;
}

function insertRef(rel: string, node: Record<string, unknown>): InsertRef {
  const defaults = someNode(node.selectStmt, (o) => 'SetToDefault' in o);
  const cols = Array.isArray(node.cols) ? node.cols.map((c) => (c as { ResTarget?: { name?: string } }).ResTarget?.name).filter((n): n is string => typeof n === 'string') : [];
  if (defaults) return { rel, cols: null, width: null };
  if (cols.length > 0) return { rel, cols, width: null };
  const values = (node.selectStmt as { SelectStmt?: { valuesLists?: { List?: { items?: unknown[] } }[] } } | undefined)?.SelectStmt?.valuesLists;
  const widths = (values ?? []).map((row) => row.List?.items?.length ?? 0);
  // Without a column list, VALUES rows fill the first columns; anything else (SELECT *) is not counted.
  return { rel, cols: null, width: widths.length > 0 ? Math.min(...widths) : null };
}

/** Built-in volatile functions whose effects end with the transaction or never leave the session. */
const HARMLESS_VOLATILE = new Set([
  'random', 'random_normal', 'setseed', 'clock_timestamp', 'timeofday', 'gen_random_uuid', 'pg_sleep', 'pg_sleep_for', 'pg_sleep_until',
  'currval', 'lastval', 'pg_database_size', 'pg_table_size', 'pg_indexes_size', 'pg_total_relation_size', 'pg_tablespace_size',
  'pg_relation_size', 'pg_is_in_recovery', 'pg_lock_status', 'pg_blocking_pids', 'pg_safe_snapshot_blocking_pids', 'pg_jit_available',
  'pg_last_wal_receive_lsn', 'pg_last_wal_replay_lsn', 'pg_last_xact_replay_timestamp', 'pg_is_wal_replay_paused', 'pg_xact_status',
  'pg_xact_commit_timestamp', 'pg_last_committed_xact', 'current_query', 'pg_notification_queue_usage', 'bernoulli', 'system',
]);

const BUILT_IN_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

const SIDE_EFFECTS_SQL = `
WITH RECURSIVE
fn_ref AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS f(schema text, name text)),
op_ref AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS o(schema text, name text)),
rel(oid) AS (
  SELECT to_regclass(q) FROM jsonb_array_elements_text($3::jsonb) AS r(q) WHERE to_regclass(q) IS NOT NULL
  UNION
  SELECT d.refobjid FROM rel JOIN pg_rewrite rw ON rw.ev_class = rel.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> rel.oid
),
ins AS (SELECT to_regclass(i.rel) AS oid, i.cols, i.width FROM jsonb_to_recordset($4::jsonb) AS i(rel text, cols text[], width int)),
ins_cols AS (
  SELECT a.attrelid, a.attnum, a.attname
    FROM ins JOIN LATERAL (
      SELECT x.attrelid, x.attnum, x.attname, row_number() OVER (ORDER BY x.attnum) AS pos
        FROM pg_attribute x WHERE x.attrelid = ins.oid AND x.attnum > 0 AND NOT x.attisdropped) a ON true
   WHERE CASE WHEN ins.cols IS NOT NULL THEN NOT (a.attname = ANY (ins.cols)) WHEN ins.width IS NOT NULL THEN a.pos > ins.width ELSE true END
),
written AS (SELECT to_regclass(w.rel) AS oid, w.events FROM jsonb_to_recordset($5::jsonb) AS w(rel text, events int)),
called(oid, via) AS (
  SELECT p.oid, '' FROM fn_ref f JOIN pg_proc p ON p.proname = f.name JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE CASE WHEN f.schema IS NULL THEN n.nspname = ANY (current_schemas(true)) ELSE n.nspname = f.schema END
  UNION ALL
  SELECT o.oprcode::oid, 'operator ' || o.oprname FROM op_ref r JOIN pg_operator o ON o.oprname = r.name JOIN pg_namespace n ON n.oid = o.oprnamespace
   WHERE o.oprcode <> 0 AND CASE WHEN r.schema IS NULL THEN n.nspname = ANY (current_schemas(true)) ELSE n.nspname = r.schema END
  UNION ALL
  SELECT d.refobjid, 'view ' || rw.ev_class::regclass::text FROM rel JOIN pg_rewrite rw ON rw.ev_class = rel.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_proc'::regclass
  UNION ALL
  SELECT d.refobjid, 'default of ' || c.attrelid::regclass::text || '.' || quote_ident(c.attname)
    FROM ins_cols c JOIN pg_attrdef ad ON ad.adrelid = c.attrelid AND ad.adnum = c.attnum
    JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND d.refclassid = 'pg_proc'::regclass
  UNION ALL
  SELECT t.tgfoid, 'trigger ' || quote_ident(t.tgname) || ' on ' || t.tgrelid::regclass::text
    FROM written w JOIN pg_trigger t ON t.tgrelid = w.oid WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' AND (t.tgtype::int & w.events) <> 0
),
seqs(seq, via) AS (
  SELECT d.refobjid, 'default of ' || c.attrelid::regclass::text || '.' || quote_ident(c.attname)
    FROM ins_cols c JOIN pg_attrdef ad ON ad.adrelid = c.attrelid AND ad.adnum = c.attnum
    JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND d.refclassid = 'pg_class'::regclass
    JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
  UNION ALL
  SELECT d.objid, 'identity column ' || c.attrelid::regclass::text || '.' || quote_ident(c.attname)
    FROM ins_cols c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
     AND d.refobjid = c.attrelid AND d.refobjsubid = c.attnum AND d.deptype = 'i'
    JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
)
SELECT 'function' AS kind, p.oid::regprocedure::text AS name, p.proname AS proname, n.nspname AS schema, p.provolatile AS volatility,
       l.lanname AS language, min(c.via) AS via
  FROM called c JOIN pg_proc p ON p.oid = c.oid JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 GROUP BY p.oid, p.proname, n.nspname, p.provolatile, l.lanname
UNION ALL
SELECT 'sequence', seq::regclass::text, NULL, NULL, NULL, NULL, min(via) FROM seqs GROUP BY seq
ORDER BY 1, 2`;

interface CatalogRow {
  kind: 'function' | 'sequence';
  name: string;
  proname: string | null;
  schema: string | null;
  volatility: 'i' | 's' | 'v' | null;
  language: string | null;
  via: string;
}

/** What would change, as phrases: for plain EXPLAIN (planning) and, in addition, for EXPLAIN ANALYZE. */
export interface SideEffects {
  planning: string[];
  execution: string[];
}

/** Looks the references up in the catalog (one read-only query) and lists what could change. */
export async function findSideEffects(client: pg.Client, refs: StatementReferences): Promise<SideEffects> {
  const r = await client.query<CatalogRow>(SIDE_EFFECTS_SQL, [
    JSON.stringify(refs.functions), JSON.stringify(refs.operators), JSON.stringify([...new Set(refs.relations)]),
    JSON.stringify(refs.inserts), JSON.stringify(refs.written),
  ]);
  const out: SideEffects = { planning: [], execution: [] };
  for (const row of r.rows) {
    const via = row.via ? ` (${row.via})` : '';
    if (row.kind === 'sequence') {
      out.execution.push(`advance the sequence ${row.name}${via}`);
      continue;
    }
    const builtIn = BUILT_IN_SCHEMAS.has(row.schema ?? '');
    const compiled = row.language === 'c' || row.language === 'internal';
    if (row.via.startsWith('trigger ')) {
      if (!builtIn) out.execution.push(`fire ${row.via} (${row.name})`);
    } else if (row.volatility === 'v') {
      if (!(builtIn && HARMLESS_VOLATILE.has(row.proname ?? ''))) out.execution.push(`call the volatile function ${row.name}${via}`);
    } else if (!builtIn && !compiled) {
      const declared = row.volatility === 'i' ? 'IMMUTABLE' : 'STABLE';
      out.planning.push(`evaluate the user-written ${declared} function ${row.name} (${row.language}${row.via ? `, ${row.via}` : ''}) while planning`);
    }
  }
  return out;
}

/** "a, b and c", with at most `max` items and a count of the rest. */
export function listPhrases(items: readonly string[], max = 4): string {
  const shown = items.slice(0, max);
  const rest = items.length - shown.length;
  if (rest > 0) shown.push(`${rest} more`);
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

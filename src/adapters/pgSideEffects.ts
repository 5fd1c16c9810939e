// What explaining a PostgreSQL statement could change that the rollback does not undo, found before
// anything runs: from PostgreSQL's own parse tree (libpg-query, read by inspectStatement) the functions,
// operators, explicit casts and relations a statement names, then from the catalog their volatility and
// everything the statement reaches beyond its text:
// - the tables it writes, and the tables writing them writes in turn (recursively): partitions and
//   inheritance children, the tables of foreign keys whose ON DELETE / ON UPDATE action is CASCADE,
//   SET NULL or SET DEFAULT, the tables a rule's actions name, the table an updatable view writes;
// - of each written table: its triggers, its rules, its CHECK constraints, its generated columns, its
//   expression and partial indexes, the CHECK constraints of the domains of the columns given values
//   (domains over domains too), and the assignment casts into those columns through user-written functions;
// - the column defaults (and identity columns) an INSERT, a rule's action or SET DEFAULT fills, with the
//   sequences they advance;
// - the functions of the views it reads (recursively), and the row-level security policies of every
//   table it reads or writes where row security applies to the connected user;
// - the cast functions of every explicit cast (`::type`, CAST) to its type, and that type's domain checks.
// Functions in stored expressions are found by their oids in the stored tree (pg_depend records no
// dependency on built-in objects such as nextval), and through the operators the tree names.
//
// What plain EXPLAIN may evaluate: nothing of the statement runs, but the planner folds IMMUTABLE
// functions with constant arguments and evaluates STABLE ones for its estimates. Built-in functions and
// C-language ones (extensions) are trusted to be what they declare; a user-written one (SQL, PL/pgSQL or
// another procedural language) declared IMMUTABLE or STABLE may call nextval() or write a file if it is
// wrongly declared, so it is reported for plain EXPLAIN too when the planner sees it (the statement, a
// view, a rule, a default, a policy, an explicit cast), and for EXPLAIN ANALYZE alone when only the
// executor runs it (a CHECK constraint, a generated column, an index expression, an assignment cast).
//
// Counted whole, where the catalog does not tell more: every table a rule's action names is taken as
// written by INSERT, UPDATE and DELETE; a trigger counts whenever its event matches (its WHEN clause and
// UPDATE OF columns are not read); a foreign key's action counts whatever rows the statement matches.
// A rule's NOTIFY is not counted: EXPLAIN does not run a rule's utility actions, and a notification is
// only sent at commit. A partition's own column defaults are not counted: a row routed through the parent
// takes the parent's defaults.
//
// Not seen: what a user-written function's body does (the function itself is reported), type input and
// output functions (C only, trusted), implicit casts other than assignments into written columns (an
// argument or an operand cast to a parameter's type), or dynamic SQL (query_to_xml). A SELECT without
// side effects runs in a READ ONLY transaction, which the server enforces for what this misses.

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
  /**
   * Tables written by INSERT, UPDATE, DELETE or MERGE, with the trigger events (pg_trigger.tgtype bits) that
   * fire and the columns given values (null: any column may be; an UPDATE's SET list; none for a DELETE).
   */
  written: { rel: string; events: number; cols: string[] | null }[];
  /** The types of explicit casts (`::type`, CAST, `type 'literal'`), as quoted (schema-)qualified names. */
  casts: string[];
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
  const refs: StatementReferences = { functions: [], operators: [], relations: [], inserts: [], written: [], casts: [], locks: false };
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
      } else if (k === 'TypeCast') {
        const names = strings((node.typeName as { names?: unknown } | undefined)?.names);
        if (names.length > 0) refs.casts.push(names.map(quoteIdent).join('.'));
      } else if (k === 'LockingClause') {
        refs.locks = true;
      } else if (k === 'InsertStmt' || k === 'UpdateStmt' || k === 'DeleteStmt' || k === 'MergeStmt') {
        const rel = relationName(node.relation);
        if (rel) {
          refs.written.push({ rel, events: triggerEvents(k, node), cols: writtenColumns(k, node) });
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

/** The columns a statement gives values: an UPDATE's SET list, none for a DELETE, any for the rest. */
function writtenColumns(kind: string, node: Record<string, unknown>): string[] | null {
  if (kind === 'DeleteStmt') return [];
  if (kind !== 'UpdateStmt' || !Array.isArray(node.targetList)) return null;
  return node.targetList.map((t) => (t as { ResTarget?: { name?: string } }).ResTarget?.name).filter((n): n is string => typeof n === 'string');
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

const SEQUENCE_WRITERS = new Set(['nextval', 'setval']);

const BUILT_IN_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

// One read-only query. `written` grows from the tables the statement writes to every table that writing
// reaches: partitions and inheritance children, the tables a foreign key's ON DELETE / ON UPDATE action
// writes, the tables a rule's actions name (the catalog does not say which of them an action writes, so
// all of them count as written), and the table an updatable view writes. `obj` is every stored
// expression that may run (view and rule actions, defaults, generated columns, CHECK constraints of
// tables and domains, expression and partial indexes, row-level security policies), and pg_depend gives
// the functions, operators and sequences each one names. Reached tables carry how (`reach`) into phrases.
const SIDE_EFFECTS_SQL = `
WITH RECURSIVE
fn_ref AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS f(schema text, name text)),
op_ref AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS o(schema text, name text)),
written(oid, events, cols, kind, reach) AS (
  SELECT to_regclass(w.rel), w.events, w.cols, 'statement', ''
    FROM jsonb_to_recordset($5::jsonb) AS w(rel text, events int, cols text[]) WHERE to_regclass(w.rel) IS NOT NULL
  UNION
  SELECT x.oid, x.events, x.cols COLLATE "default", x.kind COLLATE "default", (CASE WHEN w.reach = '' THEN x.reach ELSE w.reach END) COLLATE "default"
    FROM written w CROSS JOIN LATERAL (
      SELECT i.inhrelid AS oid, w.events, w.cols, 'partition' AS kind, 'as a partition of ' || w.oid::regclass::text AS reach
        FROM pg_inherits i WHERE i.inhparent = w.oid
      UNION ALL
      SELECT c.conrelid, CASE WHEN a.act = 'c' AND a.ev = 8 THEN 8 ELSE 16 END,
             CASE WHEN a.act = 'c' AND a.ev = 8 THEN '{}'::text[]
                  ELSE ARRAY(SELECT k.attname::text FROM pg_attribute k WHERE k.attrelid = c.conrelid AND k.attnum = ANY (c.conkey)) END,
             CASE WHEN a.act = 'd' THEN 'set default' ELSE 'foreign key' END,
             'through ON ' || CASE a.ev WHEN 8 THEN 'DELETE ' ELSE 'UPDATE ' END
               || CASE a.act WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END
               || ' of ' || quote_ident(c.conname) || ' from ' || w.oid::regclass::text
        FROM pg_constraint c CROSS JOIN LATERAL (VALUES (8, c.confdeltype), (16, c.confupdtype)) AS a(ev, act)
       WHERE c.contype = 'f' AND c.confrelid = w.oid AND (w.events & a.ev) <> 0 AND a.act IN ('c', 'n', 'd')
      UNION ALL
      SELECT DISTINCT d.refobjid, 4 | 8 | 16, NULL::text[], 'rule', 'through rule ' || quote_ident(rw.rulename) || ' on ' || w.oid::regclass::text
        FROM pg_rewrite rw
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> w.oid
        JOIN pg_class t ON t.oid = d.refobjid AND t.relkind IN ('r', 'p', 'v', 'f')
       WHERE rw.ev_class = w.oid AND rw.ev_type <> '1'
         AND (w.events & CASE rw.ev_type WHEN '2' THEN 16 WHEN '3' THEN 4 ELSE 8 END) <> 0
      UNION ALL
      SELECT DISTINCT d.refobjid, w.events, NULL::text[], 'view', 'through view ' || w.oid::regclass::text
        FROM pg_class v JOIN pg_rewrite rw ON rw.ev_class = v.oid AND rw.ev_type = '1'
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> v.oid
        JOIN pg_class t ON t.oid = d.refobjid AND t.relkind IN ('r', 'p', 'v', 'f')
       WHERE v.oid = w.oid AND v.relkind = 'v'
    ) x
),
rel(oid) AS (
  SELECT to_regclass(q) FROM jsonb_array_elements_text($3::jsonb) AS r(q) WHERE to_regclass(q) IS NOT NULL
  UNION
  SELECT oid FROM written
  UNION
  SELECT d.refobjid FROM rel JOIN pg_rewrite rw ON rw.ev_class = rel.oid AND rw.ev_type = '1'
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> rel.oid
),
ins AS (SELECT to_regclass(i.rel) AS oid, i.cols, i.width FROM jsonb_to_recordset($4::jsonb) AS i(rel text, cols text[], width int)),
filled(attrelid, attnum, attname, reach) AS (
  SELECT a.attrelid, a.attnum, a.attname, ''
    FROM ins JOIN LATERAL (
      SELECT x.attrelid, x.attnum, x.attname, x.attgenerated, row_number() OVER (ORDER BY x.attnum) AS pos
        FROM pg_attribute x WHERE x.attrelid = ins.oid AND x.attnum > 0 AND NOT x.attisdropped) a ON true
   WHERE a.attgenerated = '' AND CASE WHEN ins.cols IS NOT NULL THEN NOT (a.attname = ANY (ins.cols)) WHEN ins.width IS NOT NULL THEN a.pos > ins.width ELSE true END
  UNION
  SELECT a.attrelid, a.attnum, a.attname, w.reach
    FROM written w JOIN pg_attribute a ON a.attrelid = w.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
   WHERE (w.kind IN ('rule', 'view') AND (w.events & 4) <> 0) OR (w.kind = 'set default' AND a.attname = ANY (w.cols))
),
typ(oid, via, explicit) AS (
  SELECT a.atttypid, 'column ' || w.oid::regclass::text || '.' || quote_ident(a.attname), false
    FROM written w JOIN pg_attribute a ON a.attrelid = w.oid AND a.attnum > 0 AND NOT a.attisdropped
   WHERE (w.events & 20) <> 0 AND (w.cols IS NULL OR a.attname = ANY (w.cols))
  UNION
  SELECT to_regtype(t), 'cast to ' || to_regtype(t)::text, true FROM jsonb_array_elements_text($6::jsonb) AS c(t) WHERE to_regtype(t) IS NOT NULL
  UNION
  SELECT x.oid, typ.via, typ.explicit FROM typ JOIN pg_type t ON t.oid = typ.oid
   CROSS JOIN LATERAL (VALUES (CASE WHEN t.typtype = 'd' THEN t.typbasetype END), (CASE WHEN t.typcategory = 'A' THEN t.typelem END)) AS x(oid)
   WHERE x.oid IS NOT NULL AND x.oid <> 0
),
obj(classid, objid, via, plan, expr) AS (
  SELECT 'pg_rewrite'::regclass, rw.oid, 'view ' || rw.ev_class::regclass::text, true, rw.ev_action::text
    FROM rel JOIN pg_rewrite rw ON rw.ev_class = rel.oid AND rw.ev_type = '1'
  UNION ALL
  SELECT 'pg_rewrite'::regclass, rw.oid, 'rule ' || quote_ident(rw.rulename) || ' on ' || w.oid::regclass::text || rtrim(' ' || w.reach), true,
         rw.ev_action::text || coalesce(rw.ev_qual::text, '')
    FROM written w JOIN pg_rewrite rw ON rw.ev_class = w.oid AND rw.ev_type <> '1'
   WHERE (w.events & CASE rw.ev_type WHEN '2' THEN 16 WHEN '3' THEN 4 ELSE 8 END) <> 0
  UNION ALL
  SELECT 'pg_attrdef'::regclass, ad.oid, 'default of ' || c.attrelid::regclass::text || '.' || quote_ident(c.attname) || rtrim(' ' || c.reach), true, ad.adbin::text
    FROM filled c JOIN pg_attrdef ad ON ad.adrelid = c.attrelid AND ad.adnum = c.attnum
  UNION ALL
  SELECT 'pg_attrdef'::regclass, ad.oid, 'generated column ' || w.oid::regclass::text || '.' || quote_ident(a.attname) || rtrim(' ' || w.reach), false, ad.adbin::text
    FROM written w JOIN pg_attribute a ON a.attrelid = w.oid AND a.attgenerated = 's' AND NOT a.attisdropped
    JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
   WHERE (w.events & 20) <> 0
  UNION ALL
  SELECT 'pg_constraint'::regclass, c.oid, 'CHECK constraint ' || quote_ident(c.conname) || ' on ' || w.oid::regclass::text || rtrim(' ' || w.reach), false, c.conbin::text
    FROM written w JOIN pg_constraint c ON c.conrelid = w.oid AND c.contype = 'c'
   WHERE (w.events & 20) <> 0
  UNION ALL
  SELECT 'pg_constraint'::regclass, c.oid, 'CHECK constraint ' || quote_ident(c.conname) || ' of domain ' || c.contypid::regtype::text || ', ' || typ.via, false, c.conbin::text
    FROM typ JOIN pg_constraint c ON c.contypid = typ.oid AND c.contype = 'c'
  UNION ALL
  SELECT 'pg_class'::regclass, x.indexrelid, 'index ' || x.indexrelid::regclass::text || ' on ' || w.oid::regclass::text || rtrim(' ' || w.reach), false,
         coalesce(x.indexprs::text, '') || coalesce(x.indpred::text, '')
    FROM written w JOIN pg_index x ON x.indrelid = w.oid AND (x.indexprs IS NOT NULL OR x.indpred IS NOT NULL)
   WHERE (w.events & 20) <> 0
  UNION ALL
  SELECT 'pg_policy'::regclass, p.oid, 'policy ' || quote_ident(p.polname) || ' on ' || p.polrelid::regclass::text, true,
         coalesce(p.polqual::text, '') || coalesce(p.polwithcheck::text, '')
    FROM rel JOIN pg_policy p ON p.polrelid = rel.oid WHERE row_security_active(rel.oid)
),
called(oid, via, ctx) AS (
  SELECT p.oid, '', 'plan' FROM fn_ref f JOIN pg_proc p ON p.proname = f.name JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE CASE WHEN f.schema IS NULL THEN n.nspname = ANY (current_schemas(true)) ELSE n.nspname = f.schema END
  UNION ALL
  SELECT o.oprcode::oid, 'operator ' || o.oprname, 'plan' FROM op_ref r JOIN pg_operator o ON o.oprname = r.name JOIN pg_namespace n ON n.oid = o.oprnamespace
   WHERE o.oprcode <> 0 AND CASE WHEN r.schema IS NULL THEN n.nspname = ANY (current_schemas(true)) ELSE n.nspname = r.schema END
  UNION ALL
  SELECT d.refobjid, o.via, CASE WHEN o.plan THEN 'plan' ELSE 'run' END
    FROM obj o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid AND d.refclassid = 'pg_proc'::regclass
  UNION ALL
  SELECT op.oprcode::oid, o.via, CASE WHEN o.plan THEN 'plan' ELSE 'run' END
    FROM obj o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid AND d.refclassid = 'pg_operator'::regclass
    JOIN pg_operator op ON op.oid = d.refobjid WHERE op.oprcode <> 0
  UNION ALL
  SELECT m[1]::oid, o.via, CASE WHEN o.plan THEN 'plan' ELSE 'run' END
    FROM obj o CROSS JOIN LATERAL regexp_matches(o.expr, ':(?:funcid|aggfnoid|winfnoid) (\\d+)', 'g') AS m
  UNION ALL
  SELECT op.oprcode::oid, o.via, CASE WHEN o.plan THEN 'plan' ELSE 'run' END
    FROM obj o CROSS JOIN LATERAL regexp_matches(o.expr, ':opno (\\d+)', 'g') AS m JOIN pg_operator op ON op.oid = m[1]::oid WHERE op.oprcode <> 0
  UNION ALL
  SELECT c.castfunc, 'cast from ' || c.castsource::regtype::text || ' to ' || c.casttarget::regtype::text || CASE WHEN typ.explicit THEN '' ELSE ', ' || typ.via END,
         CASE WHEN typ.explicit THEN 'plan' ELSE 'run' END
    FROM typ JOIN pg_cast c ON c.casttarget = typ.oid AND c.castfunc <> 0
    JOIN pg_proc p ON p.oid = c.castfunc JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE typ.explicit OR (c.castcontext IN ('a', 'i') AND n.nspname NOT IN ('pg_catalog', 'information_schema'))
  UNION ALL
  SELECT t.tgfoid, 'trigger ' || quote_ident(t.tgname) || ' on ' || t.tgrelid::regclass::text || rtrim(' ' || w.reach), 'trigger'
    FROM written w JOIN pg_trigger t ON t.tgrelid = w.oid WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' AND (t.tgtype::int & w.events) <> 0
),
seqs(seq, via) AS (
  SELECT d.refobjid, o.via
    FROM obj o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid AND d.refclassid = 'pg_class'::regclass
    JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
   WHERE o.classid = 'pg_attrdef'::regclass OR EXISTS (
     SELECT 1 FROM regexp_matches(o.expr, ':funcid (\\d+)', 'g') AS m JOIN pg_proc p ON p.oid = m[1]::oid
      WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname IN ('nextval', 'setval'))
  UNION ALL
  SELECT d.objid, 'identity column ' || c.attrelid::regclass::text || '.' || quote_ident(c.attname) || rtrim(' ' || c.reach)
    FROM filled c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
     AND d.refobjid = c.attrelid AND d.refobjsubid = c.attnum AND d.deptype = 'i'
    JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
)
SELECT 'function' AS kind, p.oid::regprocedure::text AS name, p.proname AS proname, n.nspname AS schema, p.provolatile AS volatility,
       l.lanname AS language, c.ctx AS ctx, min(c.via) AS via
  FROM called c
  -- Looked up by oid, function by function (OFFSET 0 keeps the lookup apart): a join planned over the
  -- whole of pg_proc sorts thousands of rows for the few functions a statement calls.
  CROSS JOIN LATERAL (SELECT p.oid, p.proname, p.pronamespace, p.provolatile, p.prolang FROM pg_proc p WHERE p.oid = c.oid OFFSET 0) p
  JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 GROUP BY p.oid, p.proname, n.nspname, p.provolatile, l.lanname, c.ctx
UNION ALL
SELECT 'sequence', seq::regclass::text, NULL, NULL, NULL, NULL, NULL, min(via) FROM seqs GROUP BY seq
ORDER BY 1, 2, 7`;

export interface CatalogRow {
  kind: 'function' | 'sequence';
  name: string;
  proname: string | null;
  schema: string | null;
  volatility: 'i' | 's' | 'v' | null;
  language: string | null;
  /** How a function is reached: named by what is planned ('plan'), run only by the executor ('run'), or a trigger. */
  ctx: 'plan' | 'run' | 'trigger' | null;
  via: string;
}

/** What would change, as phrases: for plain EXPLAIN (planning) and, in addition, for EXPLAIN ANALYZE. */
export interface SideEffects {
  planning: string[];
  execution: string[];
}

/** Removes from `text` what runs from `from` up to, not including, `to`; each is found exactly once. */
function cut(text: string, from: string, to: string): string {
  const i = text.indexOf(from);
  const j = i < 0 ? -1 : text.indexOf(to, i + from.length);
  if (i < 0 || j < 0 || text.indexOf(from, i + 1) >= 0) throw new Error(`The side-effect query has no single place starting ${JSON.stringify(from.slice(0, 40))}.`);
  return text.slice(0, i) + text.slice(j);
}

/**
 * SIDE_EFFECTS_SQL for a statement that writes no table and inserts nothing ($4 and $5 empty): `written`
 * is then empty (its first part reads $5 alone, its recursive part joins `written`), so are `ins` ($4)
 * and `filled` (from `ins` and `written`), and so is every part that joins one of them: the written
 * tables' rules, defaults, generated columns, CHECK constraints, indexes, triggers and identity columns,
 * and the column types of written columns. What is left returns the same rows for half the planning
 * (test/integration/side-effects.test.ts compares the two on a server). Its parameters are $1, $2, $3 and
 * the casts as $4.
 */
const READS_ONLY_SQL = ((t: string) => {
  t = cut(t, 'written(oid, events, cols, kind, reach) AS (', 'rel(oid) AS (');
  t = cut(t, '  UNION\n  SELECT oid FROM written\n', '  UNION\n  SELECT d.refobjid FROM rel JOIN pg_rewrite');
  t = cut(t, 'ins AS (', 'typ(oid, via, explicit) AS (');
  t = cut(t, '  SELECT a.atttypid,', '  SELECT to_regtype(t)');
  t = cut(t, "  UNION ALL\n  SELECT 'pg_rewrite'::regclass, rw.oid, 'rule '", "  UNION ALL\n  SELECT 'pg_constraint'::regclass, c.oid, 'CHECK constraint ' || quote_ident(c.conname) || ' of domain");
  t = cut(t, "  UNION ALL\n  SELECT 'pg_class'::regclass, x.indexrelid", "  UNION ALL\n  SELECT 'pg_policy'::regclass");
  t = cut(t, '  UNION ALL\n  SELECT t.tgfoid,', '),\nseqs(seq, via) AS (');
  t = cut(t, "  UNION ALL\n  SELECT d.objid, 'identity column '", ")\nSELECT 'function' AS kind");
  t = t.replace('$6::jsonb', '$4::jsonb');
  if (/\b(written|ins|filled)\b|\$[56]/.test(t)) throw new Error('The side-effect query for reads still names what it cut.');
  return t;
})(SIDE_EFFECTS_SQL);

/**
 * The one read-only catalog query that looks the references up (the door to the server runs it:
 * adapters/door.ts), with the name it is prepared under: for a statement that writes and inserts nothing
 * the same query without its parts about written tables (READS_ONLY_SQL), unless `full` is asked.
 */
export function sideEffectsQuery(refs: StatementReferences, full = false): { name: string; text: string; values: string[] } {
  // Each name once: a statement that uses `=` ten times asks about its operators once.
  const functions = JSON.stringify(distinct(refs.functions));
  const operators = JSON.stringify(distinct(refs.operators));
  const relations = JSON.stringify([...new Set(refs.relations)]);
  const casts = JSON.stringify([...new Set(refs.casts)]);
  if (!full && refs.written.length === 0 && refs.inserts.length === 0) {
    return { name: 'qpi_side_effects_reads', text: READS_ONLY_SQL, values: [functions, operators, relations, casts] };
  }
  return { name: 'qpi_side_effects', text: SIDE_EFFECTS_SQL, values: [functions, operators, relations, JSON.stringify(refs.inserts), JSON.stringify(refs.written), casts] };
}

function distinct(refs: readonly NameRef[]): NameRef[] {
  const seen = new Map<string, NameRef>();
  for (const r of refs) seen.set(JSON.stringify([r.schema, r.name]), r);
  return [...seen.values()];
}

/** What the catalog's rows (of sideEffectsQuery) say could change, as phrases. */
export function readSideEffects(rows: readonly CatalogRow[]): SideEffects {
  const out: SideEffects = { planning: [], execution: [] };
  // A stored nextval() whose sequence the catalog names is said once, by the sequence it advances.
  const advanced = new Set(rows.filter((row) => row.kind === 'sequence').map((row) => row.via));
  for (const row of rows) {
    if (row.kind === 'function' && row.schema === 'pg_catalog' && SEQUENCE_WRITERS.has(row.proname ?? '') && row.via && advanced.has(row.via)) continue;
    const via = row.via ? ` (${row.via})` : '';
    if (row.kind === 'sequence') {
      out.execution.push(`advance the sequence ${row.name}${via}`);
      continue;
    }
    const builtIn = BUILT_IN_SCHEMAS.has(row.schema ?? '');
    const compiled = row.language === 'c' || row.language === 'internal';
    if (row.ctx === 'trigger') {
      if (!builtIn) out.execution.push(`fire ${row.via} (${row.name})`);
    } else if (row.volatility === 'v') {
      if (!(builtIn && HARMLESS_VOLATILE.has(row.proname ?? ''))) out.execution.push(`call the volatile function ${row.name}${via}`);
    } else if (!builtIn && !compiled) {
      const declared = row.volatility === 'i' ? 'IMMUTABLE' : 'STABLE';
      const detail = `(${row.language}${row.via ? `, ${row.via}` : ''})`;
      // What the executor alone runs (a CHECK constraint, an index expression) is not evaluated by plain EXPLAIN.
      if (row.ctx === 'run') out.execution.push(`call the user-written ${declared} function ${row.name} ${detail}`);
      else out.planning.push(`evaluate the user-written ${declared} function ${row.name} ${detail} while planning`);
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

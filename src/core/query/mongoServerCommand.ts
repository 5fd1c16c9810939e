// Turns a MongoCommand into the database command the server runs, the same one the drivers send
// (find, aggregate, count, distinct, update, delete, findAndModify). Wrapped in `explain` by the adapter,
// so a write is planned, never applied. Values stay Extended JSON; the adapter converts them to BSON.

import type { Doc, MongoCommand } from './mongoShell';

export type ServerCommandResult = { ok: true; command: Doc; warnings: string[] } | { ok: false; error: string };

/** Options each command family passes on as written; anything else is named in a warning. */
const PASS_THROUGH: Record<string, string[]> = {
  find: ['allowDiskUse', 'min', 'max', 'let', 'returnKey', 'showRecordId', 'readConcern'],
  aggregate: ['allowDiskUse', 'let', 'bypassDocumentValidation', 'readConcern'],
  count: ['readConcern'],
  distinct: ['readConcern'],
  update: ['upsert', 'arrayFilters'],
  delete: [],
  findAndModify: ['upsert', 'arrayFilters', 'bypassDocumentValidation', 'let'],
};

/** The stages that write their output to a collection. */
export function writingStages(cmd: MongoCommand): string[] {
  if (cmd.operation !== 'aggregate' || !cmd.pipeline) return [];
  return cmd.pipeline.map((s) => Object.keys(s)[0]!).filter((k) => k === '$out' || k === '$merge');
}

/** True when explaining the command with execution could change data (only $out/$merge pipelines). */
export function explainWouldWrite(cmd: MongoCommand): boolean {
  return writingStages(cmd).length > 0;
}

export function toServerCommand(cmd: MongoCommand): ServerCommandResult {
  if (cmd.hasPlaceholders) {
    return { ok: false, error: 'The query uses values that are not written out (variables or function calls): replace them with literal values to explain it.' };
  }
  const warnings: string[] = [];
  const coll = cmd.collection;
  const filter = cmd.filter ?? {};
  const put = (doc: Doc, key: string, value: unknown): void => {
    if (value !== undefined) doc[key] = value;
  };
  // The command's parts that go into the server's command under their own names, when set.
  const copy = (doc: Doc, ...keys: ('sort' | 'projection' | 'skip' | 'limit' | 'hint' | 'collation')[]): void => {
    for (const k of keys) put(doc, k, cmd[k]);
  };
  const passOptions = (doc: Doc, family: keyof typeof PASS_THROUGH): void => {
    for (const [k, v] of Object.entries(cmd.options ?? {})) {
      if (PASS_THROUGH[family]!.includes(k)) doc[k] = v;
      else if (!(family === 'findAndModify' && (k === 'returnDocument' || k === 'returnNewDocument'))) {
        warnings.push(`The option ${k} is not sent with the explain of ${cmd.operation}.`);
      }
    }
  };
  switch (cmd.operation) {
    case 'find':
    case 'findOne': {
      const doc: Doc = { find: coll, filter };
      copy(doc, 'sort', 'projection', 'skip', 'limit', 'hint', 'collation');
      if (cmd.operation === 'findOne') doc.singleBatch = true;
      passOptions(doc, 'find');
      return { ok: true, command: doc, warnings };
    }
    case 'aggregate': {
      const doc: Doc = { aggregate: coll, pipeline: cmd.pipeline ?? [], cursor: {} };
      copy(doc, 'hint', 'collation');
      passOptions(doc, 'aggregate');
      return { ok: true, command: doc, warnings };
    }
    case 'count': {
      const doc: Doc = { count: coll, query: filter };
      copy(doc, 'skip', 'limit', 'hint', 'collation');
      passOptions(doc, 'count');
      return { ok: true, command: doc, warnings };
    }
    case 'countDocuments': {
      // The drivers run countDocuments as this pipeline; explaining it shows the plan they get.
      const pipeline: Doc[] = [{ $match: filter }];
      if (cmd.skip !== undefined) pipeline.push({ $skip: cmd.skip });
      if (cmd.limit !== undefined) pipeline.push({ $limit: cmd.limit });
      pipeline.push({ $group: { _id: 1, n: { $sum: 1 } } });
      const doc: Doc = { aggregate: coll, pipeline, cursor: {} };
      copy(doc, 'hint', 'collation');
      passOptions(doc, 'aggregate');
      return { ok: true, command: doc, warnings };
    }
    case 'distinct': {
      const doc: Doc = { distinct: coll, key: cmd.field ?? '', query: filter };
      copy(doc, 'collation', 'hint');
      passOptions(doc, 'distinct');
      return { ok: true, command: doc, warnings };
    }
    case 'updateOne':
    case 'updateMany':
    case 'replaceOne': {
      const stmt: Doc = { q: filter, u: cmd.update ?? {}, multi: cmd.operation === 'updateMany' };
      copy(stmt, 'hint', 'collation');
      const doc: Doc = { update: coll, updates: [stmt] };
      passOptions(stmt, 'update');
      return { ok: true, command: doc, warnings };
    }
    case 'deleteOne':
    case 'deleteMany': {
      const stmt: Doc = { q: filter, limit: cmd.operation === 'deleteOne' ? 1 : 0 };
      copy(stmt, 'hint', 'collation');
      passOptions(stmt, 'delete');
      return { ok: true, command: { delete: coll, deletes: [stmt] }, warnings };
    }
    case 'findOneAndUpdate':
    case 'findOneAndReplace':
    case 'findOneAndDelete': {
      const doc: Doc = { findAndModify: coll, query: filter };
      put(doc, 'sort', cmd.sort);
      put(doc, 'fields', cmd.projection);
      copy(doc, 'hint', 'collation');
      if (cmd.operation === 'findOneAndDelete') doc.remove = true;
      else {
        doc.update = cmd.update ?? {};
        const o = cmd.options ?? {};
        doc.new = o.returnDocument === 'after' || o.returnNewDocument === true;
      }
      passOptions(doc, 'findAndModify');
      return { ok: true, command: doc, warnings };
    }
  }
}

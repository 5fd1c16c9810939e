// The index lists the server asks the extension for (SchemaNeeded), stores per document (SetSchema) and
// forgets when the folder's connection changes (ClearSchema).

import { isCollectionFamily, type DocumentSchema } from '../../core/index';
import { SchemaNeeded, type ClearSchemaParams, type SchemaNeededParams, type SetSchemaParams, type SetSchemaResult } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import type { DocState } from '../documents';
import { askAdvice, forgetAdvice } from './advice';
import { scheduleExplain } from './plans';

/** How long lenses wait for a document's index lists after they were cleared, before the rules speak alone. */
const RECONNECT_MS = 5_000;

/** Tells the client which collections and tables it has no schema for yet (each once). */
export function announce(ctx: ServerContext, state: DocState): void {
  const need: SchemaNeededParams = { uri: state.uri, mongodb: [], postgres: [] };
  for (const q of state.queries) {
    if (state.announcedQueries.has(q)) continue;
    state.announcedQueries.add(q);
    if (q.engine === 'mongodb') {
      // A collection chosen at run time has no name to ask for; a family's (`app_users*`) is no one collection's.
      if (q.command.collection === '' || isCollectionFamily(q.command.collection)) continue;
      const key = `m\u0000${q.command.database ?? ''}\u0000${q.command.collection}`;
      if (state.announced.has(key) || state.schema?.collections.has(q.command.collection)) continue;
      state.announced.add(key);
      need.mongodb.push({ collection: q.command.collection, ...(q.command.database !== undefined ? { database: q.command.database } : {}) });
    } else {
      for (const t of ctx.analyses.cached(state, q, false, true).analysis.targets) {
        const key = `p\u0000${t}`;
        if (state.announced.has(key) || state.schema?.tables.has(t)) continue;
        state.announced.add(key);
        need.postgres.push({ table: t });
      }
    }
  }
  if (need.mongodb.length > 0 || need.postgres.length > 0) ctx.port.sendNotification(SchemaNeeded, need);
}

export function setSchema(ctx: ServerContext, params: SetSchemaParams): SetSchemaResult {
  let advised = 0;
  for (const uri of params.uris) {
    const state = ctx.docs.get(uri);
    if (!state) continue;
    const schema: DocumentSchema = state.schema ?? { connection: {}, collections: new Map(), tables: new Map(), plans: new Map(), advice: new Map() };
    const switched = schema.connection[params.engine] !== undefined && schema.connection[params.engine] !== params.connectionName;
    schema.connection[params.engine] = params.connectionName;
    // An index list that changed (built, dropped, another connection) makes the plans and the advice
    // given with the old one wrong: they are dropped and asked for again.
    let changed = switched;
    // What the catalog says a name is comes with its list: a table created or dropped is news too.
    for (const c of params.collections ?? []) {
      const before = schema.collections.get(c.name);
      if (before && (JSON.stringify(before.indexes) !== JSON.stringify(c.indexes) || (c.relation !== undefined && JSON.stringify(before.relation) !== JSON.stringify(c.relation)))) changed = true;
      schema.collections.set(c.name, { indexes: c.indexes, ...(c.stats ? { stats: c.stats } : {}), ...(c.relation !== undefined ? { relation: c.relation } : {}) });
    }
    for (const t of params.tables ?? []) {
      const before = schema.tables.get(t.name);
      if (before && (JSON.stringify(before.indexes) !== JSON.stringify(t.indexes) || (t.relation !== undefined && JSON.stringify(before.relation) !== JSON.stringify(t.relation)))) changed = true;
      schema.tables.set(t.name, { indexes: t.indexes, ...(t.stats ? { stats: t.stats } : {}), ...(t.relation !== undefined ? { relation: t.relation } : {}) });
    }
    state.schema = schema;
    delete state.reconnecting;
    if (changed) forgetAdvice(state);
    state.schemaVersion++;
    ctx.current(uri);
    ctx.publish(state);
    askAdvice(ctx, state);
    scheduleExplain(ctx, state, changed ? 0 : undefined);
    ctx.port.refreshLenses?.();
    advised += state.queries.filter((q) => ctx.analyses.of(state, q).connected).length;
  }
  return { advised };
}

export function clearSchema(ctx: ServerContext, params: ClearSchemaParams): void {
  for (const state of ctx.docs.values()) {
    if (params.uris && !params.uris.includes(state.uri)) continue;
    // A document without a schema is announced again too: its folder may have a connection now.
    if (state.schema) state.reconnecting = { connection: { ...state.schema.connection }, until: Date.now() + RECONNECT_MS };
    forgetAdvice(state);
    delete state.schema;
    state.schemaVersion++;
    state.announced.clear();
    state.announcedQueries = new WeakSet();
    ctx.publish(state);
    announce(ctx, state);
  }
  ctx.port.refreshLenses?.();
  // Lenses of a document whose lists never came back (no connection any more) fall back to the rules.
  const t = setTimeout(() => ctx.port.refreshLenses?.(), RECONNECT_MS + 50);
  t.unref?.();
}

// Maps the shell-text reader's MongoCommand onto the advisor's structured input. The command keeps every
// operation the shell has; the advisor needs only what bounds an index: the filter, the sort, the
// projection, limit/skip, the pipeline, and the distinct field. Writes are advised on their filter (and
// the sort of findOneAnd...), since that is how the server finds the documents to change.

import type { MongoCommand } from '../query/mongoShell';
import type { MongoQueryInput } from './types';

export type MongoInputResult = { ok: true; query: MongoQueryInput; notes: string[] } | { ok: false; refusal: string };

export function fromMongoCommand(cmd: MongoCommand): MongoInputResult {
  if (!cmd || typeof cmd.collection !== 'string' || cmd.collection === '') return { ok: false, refusal: 'The command names no collection.' };
  const notes: string[] = [];
  const query: MongoQueryInput = { collection: cmd.collection };
  const take = (withSort: boolean, withPaging: boolean) => {
    if (cmd.filter) query.filter = cmd.filter;
    if (withSort && cmd.sort) query.sort = cmd.sort;
    if (cmd.projection) query.projection = cmd.projection;
    if (withPaging && cmd.limit !== undefined) query.limit = cmd.limit;
    if (withPaging && cmd.skip !== undefined) query.skip = cmd.skip;
  };
  switch (cmd.operation) {
    case 'find':
      query.operation = 'find';
      take(true, true);
      break;
    case 'findOne':
      query.operation = 'find';
      take(true, true);
      query.limit = 1;
      break;
    case 'aggregate':
      query.operation = 'aggregate';
      query.pipeline = cmd.pipeline ?? [];
      break;
    case 'count':
    case 'countDocuments':
      query.operation = 'count';
      take(false, true);
      delete query.projection;
      break;
    case 'distinct':
      query.operation = 'distinct';
      if (cmd.field !== undefined) query.field = cmd.field;
      take(false, false);
      break;
    case 'updateOne':
    case 'updateMany':
    case 'replaceOne':
      query.operation = 'update';
      take(false, false);
      delete query.projection;
      break;
    case 'findOneAndUpdate':
    case 'findOneAndReplace':
      query.operation = 'update';
      take(true, false);
      delete query.projection;
      query.limit = 1;
      break;
    case 'deleteOne':
    case 'deleteMany':
      query.operation = 'delete';
      take(false, false);
      delete query.projection;
      break;
    case 'findOneAndDelete':
      query.operation = 'delete';
      take(true, false);
      delete query.projection;
      query.limit = 1;
      break;
    default:
      return { ok: false, refusal: `The operation ${String((cmd as { operation?: unknown }).operation)} has no index advice.` };
  }
  if (cmd.hint !== undefined) notes.push('The query forces an index with hint(); the advice ignores the hint and says which index would serve best.');
  if (cmd.collation !== undefined) notes.push('The query sets a collation: an index serves string comparisons only if it was built with the same collation.');
  if (cmd.hasPlaceholders) notes.push('Some values are variables in the code; the advice reads their operators, and $in lists of unknown length are assumed to stay within 200 values.');
  return { ok: true, query, notes };
}

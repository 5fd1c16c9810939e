// Collections named by a literal joined to a value chosen at run time: `'app_users' + appId`,
// `` `events_${appId}` ``, a GridFS bucket's `bucketName + '.files'`. Such a call is one query on each
// collection of a family; the family is written with `*` where the run-time part goes (`app_users*`,
// `events_*`, `*.files`), and that name is what the advice, the hover and the repository's schema use.
// Explain needs one real collection of it: the names a server lists are matched with familyMatches.

import { MAX_RESOLVE_DEPTH, type Extractor } from './extractor';
import { cookedOf, unwrap, type BNode } from './syntax';
import { formatCount } from '../../format';

/** What stands for the part of a family's name chosen at run time. */
export const FAMILY_PART = '*';

/**
 * The collections a family's name stands for (`app_users*`: each `*` at least one character), as the
 * source of a regular expression over the names a server lists.
 */
export function familyPattern(family: string): string {
  return `^${family.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.+')}$`;
}

/** The start of a mongosh command run on each collection of a family, up to the method called on each. */
export function eachOfFamily(family: string): string {
  return `db.getCollectionNames().filter((n) => /${familyPattern(family)}/.test(n)).forEach((n) => db.getCollection(n).`;
}

/** True when a collection name is a family's (`app_users*`), not one collection's. */
export function isCollectionFamily(name: string): boolean {
  return name.includes(FAMILY_PART);
}

/** The names of `names` that belong to the family: each `*` stands for at least one character. */
export function familyMembers(family: string, names: readonly string[]): string[] {
  const pattern = new RegExp(familyPattern(family), 's');
  return names.filter((n) => pattern.test(n));
}

/**
 * The family an expression names, or undefined when it is one literal name or has no literal text that
 * tells its collections apart (`prefix + name`, `'_' + x`: chosen at run time). Constants are put in.
 */
export function collectionFamily(e: BNode, stringOf: (e: BNode) => string | undefined): string | undefined {
  const parts = familyParts(e, stringOf, 0);
  const name = parts.join('').replace(/\*+/g, FAMILY_PART);
  return isCollectionFamily(name) && /[\p{L}\p{N}]/u.test(name.replaceAll(FAMILY_PART, '')) ? name : undefined;
}

/** The literal text of a name and a `*` for each part chosen at run time, in order. */
function familyParts(e: BNode, stringOf: (e: BNode) => string | undefined, depth: number): string[] {
  e = unwrap(e);
  const known = stringOf(e);
  if (known !== undefined) return [known.replaceAll(FAMILY_PART, '')];
  if (depth > MAX_RESOLVE_DEPTH) return [FAMILY_PART];
  if (e.type === 'BinaryExpression' && e.operator === '+' && e.left && e.right) {
    return [...familyParts(e.left, stringOf, depth + 1), ...familyParts(e.right, stringOf, depth + 1)];
  }
  if (e.type === 'TemplateLiteral') {
    const out: string[] = [];
    (e.quasis ?? []).forEach((q, i) => {
      out.push(cookedOf(q).replaceAll(FAMILY_PART, ''));
      const hole = e.expressions?.[i];
      if (hole) out.push(...familyParts(hole, stringOf, depth + 1));
    });
    return out;
  }
  return [FAMILY_PART];
}

/**
 * The one name an expression built of parts writes when every part is known (`` `app.${name}` `` where the
 * call gives `name` as 'users'): `app.users`; undefined for a literal alone or when a part is chosen at run
 * time (a family, collectionFamily).
 */
export function joinedIn(ex: Extractor, e: BNode): string | undefined {
  const start = unwrap(e);
  const held = unwrap(start.type === 'Identifier' ? ex.resolve(start) : start);
  if (held.type !== 'TemplateLiteral' && !(held.type === 'BinaryExpression' && held.operator === '+')) return undefined;
  const parts = familyParts(held, (x) => ex.stringOf(x, 0), 0);
  const name = parts.join('');
  return parts.includes(FAMILY_PART) || name === '' ? undefined : name;
}

/** The family an expression names in a file the finder reads, through the file's constants. */
export function familyIn(ex: Extractor, e: BNode): string | undefined {
  const start = unwrap(e);
  // `const coll = 'app_users' + appId; db.collection(coll)`: the name a constant holds.
  const held = start.type === 'Identifier' ? ex.resolve(start) : start;
  return collectionFamily(held, (x) => ex.stringOf(x, 0));
}

/**
 * GridFS's own indexes, which the driver builds on a bucket's collections before it first writes
 * (`{ filename: 1, uploadDate: 1 }` on files, `{ files_id: 1, n: 1 }` unique on chunks): a bucket's
 * files or chunks (`*.files`, the default `fs.files`) has them.
 */
export function gridFsIndexes(collection: string): { name: string; key: Record<string, number>; unique?: boolean }[] {
  const bucket = /^(?:\*|fs)\.(files|chunks)$/.exec(collection)?.[1];
  if (bucket === 'files') return [{ name: 'filename_1_uploadDate_1', key: { filename: 1, uploadDate: 1 } }];
  if (bucket === 'chunks') return [{ name: 'files_id_1_n_1', key: { files_id: 1, n: 1 }, unique: true }];
  return [];
}

/** The hover's sentence on a query of a family. */
export function familySentence(family: string, code: string): string {
  return `The collection is one of the family ${family}, named at run time (${code}): the advice is for each collection of it, and an index is meant for each.`;
}

/** One collection of a family on a server, with its document count when it was counted. */
export interface FamilyMember {
  name: string;
  documents?: number;
}

/**
 * The shell text of a query (or a createIndex) on a family, written on one collection of it instead; a
 * createIndex written for each collection of the family (createIndexText) becomes one on that collection.
 */
export function onFamilyMember(text: string, family: string, member: string): string {
  const each = eachOfFamily(family);
  if (text.startsWith(each) && text.endsWith(')')) return `db.getCollection(${JSON.stringify(member)}).${text.slice(each.length, -1)}`;
  return text.replace(`getCollection(${JSON.stringify(family)})`, `getCollection(${JSON.stringify(member)})`);
}

/** The other collections of a family, for a sentence: the first few by name, and how many more. */
export function otherMembers(members: readonly FamilyMember[], chosen: string): string {
  const others = members.map((m) => m.name).filter((n) => n !== chosen).sort();
  if (others.length === 0) return 'no other';
  const shown = others.slice(0, 5).join(', ');
  return others.length > 5 ? `${shown} and ${formatCount(others.length - 5)} more` : shown;
}

/**
 * The collection of a family Explain runs on: the one asked for, else the largest (the list comes
 * largest first), with the sentence that says which and why; undefined with none on the server.
 */
export function chooseFamilyMember(family: string, members: readonly FamilyMember[], asked?: string): { name: string; why: string; sentence: string } | undefined {
  const chosen = (asked !== undefined ? members.find((m) => m.name === asked) : undefined) ?? members[0];
  if (!chosen) return undefined;
  const count = chosen.documents !== undefined ? `, ${formatCount(chosen.documents)} ${chosen.documents === 1 ? 'document' : 'documents'}` : '';
  const why = members.length === 1 ? 'the only collection' : chosen === members[0] && chosen.name !== asked ? `the largest of ${members.length} collections` : `one of ${members.length} collections`;
  const others = members.length > 1 ? `; the others: ${otherMembers(members, chosen.name)}` : '';
  return { name: chosen.name, why: `${why} of the family ${family}`, sentence: `Explained on ${chosen.name}, ${why} of the family ${family}${count}${others}.` };
}

// What the schema readers of scripts share (Mongoose schemas, TypeORM entities): the file parsed as the
// finder parses it, and the literal values of object members, read without evaluating anything.

import { parse as babelParse } from '@babel/parser';
import { BABEL_PLUGINS } from '../query/find/scriptIndex';
import type { BNode } from '../query/find/syntax';
import type { ScriptDialect } from '../query/find/types';
import type { DeclaredPgIndex, RepositorySchema } from './types';

/**
 * The file's program, or undefined when it does not parse at all (recoverable errors are recovered);
 * then the schema's warnings say that `what` the file declares was not read.
 */
export function parseScript(text: string, dialect: ScriptDialect, source: string, into: RepositorySchema, what: string): BNode | undefined {
  try {
    return (babelParse(text, { sourceType: 'unambiguous', errorRecovery: true, attachComment: false, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true, plugins: BABEL_PLUGINS[dialect] }) as unknown as { program: BNode }).program;
  } catch {
    into.warnings.push(`${source}: the file does not parse, so its ${what} were not read.`);
    return undefined;
  }
}

export function keyOf(p: BNode): string | undefined {
  if (p.type !== 'ObjectProperty' || !p.key) return undefined;
  if (p.key.type === 'Identifier' && !p.computed) return p.key.name;
  if (p.key.type === 'StringLiteral') return p.key.value as string;
  return undefined;
}

export function property(obj: BNode, name: string): BNode | undefined {
  return (obj.properties ?? []).find((p) => keyOf(p) === name)?.value as BNode | undefined;
}

export function stringValue(n: BNode | undefined): string | undefined {
  if (n?.type === 'StringLiteral') return n.value as string;
  if (n?.type === 'TemplateLiteral' && (n.expressions ?? []).length === 0) return (n.quasis?.[0] as { value?: { cooked?: string } } | undefined)?.value?.cooked;
  return undefined;
}

export function booleanValue(n: BNode | undefined): boolean | undefined {
  return n?.type === 'BooleanLiteral' ? (n.value as boolean) : undefined;
}

/** Adds a declared index to its table, replacing one of the same name the same file declared before. */
export function addTableIndex(into: RepositorySchema, ix: DeclaredPgIndex): void {
  const list = (into.tables.get(ix.table) ?? []).filter((x) => x.name !== ix.name || x.source !== ix.source);
  list.push(ix);
  into.tables.set(ix.table, list);
}

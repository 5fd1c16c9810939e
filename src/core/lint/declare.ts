// Declaring a name a quick fix introduces, so the fixed code compiles: the keyset rewrite compares with
// "the last value of the previous page", which the code must be given. Inside a function the name becomes
// the function's last parameter (typed `unknown` in TypeScript, optional when the parameter before it is);
// outside any function (a playground, a script) it is declared before the statement as `let name;`, a
// value the finder cannot read, so Explain asks for it (as for SQL's $1) instead of explaining with null.
// Parsed on demand (a code action), not per edit.

import { parse as babelParse } from '@babel/parser';
import { BABEL_PLUGINS } from '../query/find/scriptIndex';
import type { ScriptDialect } from '../query/find/types';
import type { BNode } from '../query/find/syntax';
import { forEachNode } from '../sql/tree';

/** A text edit, with the same text as a snippet whose tab stop selects what the user should choose. */
export interface DeclareEdit {
  start: number;
  end: number;
  newText: string;
  snippet: string;
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod']);

/** The edit that declares `name` for the code at `offset`, or undefined when the file cannot be read there. */
export function declareEdit(text: string, dialect: ScriptDialect, offset: number, name: string, why: string): DeclareEdit | undefined {
  let program: BNode;
  try {
    program = (babelParse(text, { sourceType: 'unambiguous', errorRecovery: true, attachComment: false, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true, plugins: BABEL_PLUGINS[dialect] }) as unknown as { program: BNode }).program;
  } catch {
    return undefined;
  }
  const ts = dialect !== 'js';
  const fn = innermost(program, offset, (n) => FUNCTIONS.has(n.type));
  if (fn) {
    const params = (fn as BNode & { params?: BNode[] }).params ?? [];
    const last = params[params.length - 1];
    if (last?.type === 'RestElement' || last?.type === 'TSParameterProperty') return undefined;
    const optional = last !== undefined && (last.type === 'AssignmentPattern' || (last as BNode & { optional?: boolean }).optional === true);
    const typed = (type: string) => (ts ? `${name}${optional ? '?' : ''}: ${type}` : name);
    const param = { text: typed('unknown'), snippet: ts ? typed('${1:unknown}') : `\${1:${name}}` };
    if (last) {
      // `x => ...` has no parentheses to add to.
      if (fn.type === 'ArrowFunctionExpression' && params.length === 1 && text[last.start - 1] !== '(' && !/\(\s*$/.test(text.slice(fn.start, last.start))) {
        const own = text.slice(last.start, last.end);
        return { start: last.start, end: last.end, newText: `(${own}, ${param.text})`, snippet: `(${escape(own)}, ${param.snippet})` };
      }
      return { start: last.end, end: last.end, newText: `, ${param.text}`, snippet: `, ${param.snippet}` };
    }
    const open = text.indexOf('(', fn.type === 'ClassMethod' || fn.type === 'ObjectMethod' || fn.type === 'ClassPrivateMethod' ? (fn.key?.end ?? fn.start) : fn.start);
    if (open < 0 || text[open + 1] !== ')') return undefined;
    return { start: open + 1, end: open + 1, newText: param.text, snippet: param.snippet };
  }
  const statement = (program.body as BNode[]).find((s) => s.start <= offset && offset <= s.end);
  if (!statement) return undefined;
  const lineStart = text.lastIndexOf('\n', statement.start - 1) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
  return {
    start: lineStart,
    end: lineStart,
    newText: `${indent}let ${name}; // ${why}\n`,
    snippet: `${indent}let ${name}\${1:}; // ${escape(why)}\n`,
  };
}

/** The smallest node around `offset` that passes `test`. */
function innermost(root: BNode, offset: number, test: (n: BNode) => boolean): BNode | undefined {
  let found: BNode | undefined;
  forEachNode(root, (o) => {
    const n = o as unknown as BNode;
    if (typeof n.type !== 'string' || !(n.start <= offset && offset <= n.end) || !test(n)) return;
    if (!found || n.end - n.start < found.end - found.start) found = n;
  });
  return found;
}

/** Text that goes into a snippet literally. */
function escape(s: string): string {
  return s.replace(/[$}\\]/g, '\\$&');
}

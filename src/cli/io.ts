// What `qpi` reads and writes, and how it ends: exit codes, the terminal escaping, bounded reading of
// plan files and standard input. The commands receive an Io so tests can run them in-process.

import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { formatBytes, MAX_PLAN_TEXT } from '../core/index';
import { decodeText } from './decode';

export const EXIT_OK = 0;
export const EXIT_REFUSED = 2;
export const EXIT_USAGE = 64;

export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readStdin: () => string | Promise<string>;
  readFile: (path: string) => string | Promise<string>;
  /**
   * A progress line on a terminal, rewritten in place; absent when standard error is not a terminal (a
   * pipe, a file, a CI log). Only the command's own words reach it, never text from a server. An empty
   * line clears it.
   */
  progress?: (line: string) => void;
}

/**
 * A subcommand's flags and positionals, strictly: an unknown flag or a missing value gives the first line
 * of node's refusal, the one sentence the user sees.
 */
export function strictFlags<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    return err instanceof Error ? err.message.split('\n')[0]! : String(err);
  }
}

/** An input that cannot be read as a plan, with the one sentence the user sees. */
export class InputRefused extends Error {}

/**
 * Text from a plan or a server (index names, filters, error messages) reaches a terminal: control
 * characters, and the format characters that reorder or hide text (bidi overrides and isolates,
 * zero-width marks), are written as visible \uXXXX escapes so none of them can move the cursor, clear
 * the screen, retitle the window or make a line read differently from what it holds. Inside JSON strings
 * the escape reads back as the same character.
 */
export function inert(s: string): string {
  return s.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Reads a stream up to `cap` bytes and stops there: a device such as /dev/zero, an endless pipe or a
 * huge file costs at most the cap in memory, never more.
 */
export function readCapped(stream: Readable, cap: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (v: Buffer | 'too-large') => {
      stream.removeAllListeners('data');
      stream.destroy();
      resolve(v);
    };
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) done('too-large');
      else chunks.push(chunk);
    });
    stream.once('end', () => done(Buffer.concat(chunks, size)));
    stream.once('error', reject);
  });
}

/** Reads one plan input (a path, or standard input) with the size cap applied while reading. */
export async function readPlanInput(stream: Readable, name: string): Promise<string> {
  const bytes = await readCapped(stream, MAX_PLAN_TEXT);
  if (bytes === 'too-large') throw new InputRefused(`${name} is larger than the ${formatBytes(MAX_PLAN_TEXT)} a plan may have; nothing was analysed.`);
  const decoded = decodeText(bytes);
  if (!decoded.ok) throw new InputRefused(`${name}: ${decoded.refusal}`);
  return decoded.text;
}

/** The sentence for a file that cannot be opened or read. */
export function readFailure(file: string, err: unknown): string {
  if (err instanceof InputRefused) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? `There is no file ${file}.` : code === 'EISDIR' ? `${file} is a folder, not a plan file.` : `${file} could not be read (${code ?? 'unknown error'}).`;
}

/**
 * A file's text (standard input's for "-" where the command takes it there), or undefined after one
 * sentence on stderr saying why it could not be read.
 */
export async function readOrSay(io: Io, file: string, opts: { dashIsStdin?: boolean } = {}): Promise<string | undefined> {
  try {
    return await (opts.dashIsStdin && file === '-' ? io.readStdin() : io.readFile(file));
  } catch (err) {
    io.stderr(`${readFailure(file, err)}\n`);
    return undefined;
  }
}

export const processIo: Io = {
  stdout: (s) => process.stdout.write(inert(s)),
  stderr: (s) => process.stderr.write(inert(s)),
  readStdin: () => readPlanInput(process.stdin, 'Standard input'),
  readFile: (p) => readPlanInput(createReadStream(p), p),
  ...(process.stderr.isTTY ? { progress: (line: string) => void process.stderr.write(`\r\u001b[K${line}`) } : {}),
};

/**
 * A reader that closes the pipe early (`qpi analyze plan | head`) is not an error: the output stops
 * quietly with exit 0, the way command-line tools behave, instead of a stack trace.
 */
export function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(EXIT_OK);
      throw err;
    });
  }
}

// The Io the CLI tests run `qpi` with in-process: what it writes is kept in `out` and `err`, standard
// input is the text given, and files are read from `files` first, then from disk.

import { readFileSync } from 'node:fs';
import type { Io } from '../../src/cli/io';

export type CapturedIo = Io & { out: string; err: string };

export function captureIo(opts: { stdin?: string; files?: Record<string, string> } = {}): CapturedIo {
  const io: CapturedIo = {
    out: '',
    err: '',
    stdout: (s) => {
      io.out += s;
    },
    stderr: (s) => {
      io.err += s;
    },
    readStdin: () => opts.stdin ?? '',
    readFile: (p) => opts.files?.[p] ?? readFileSync(p, 'utf8'),
  };
  return io;
}

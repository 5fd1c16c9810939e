// The command line's I/O captured in memory, for tests that run `qpi` in process.

import { readFileSync } from 'node:fs';
import type { Io } from '../../../src/cli/io';

export function capturedIo(): Io & { out: string; err: string } {
  const io: Io & { out: string; err: string } = {
    out: '',
    err: '',
    stdout: (s) => void (io.out += s),
    stderr: (s) => void (io.err += s),
    readStdin: () => '',
    readFile: (p) => readFileSync(p, 'utf8'),
  };
  return io;
}

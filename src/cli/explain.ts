// `qpi explain`: placeholder until the adapters land; refuses in one sentence.
import type { Io } from './main';
export async function runExplain(_flags: Map<string, string | true>, io: Io): Promise<number> {
  io.stderr('qpi explain is not available in this build yet.\n');
  return 2;
}

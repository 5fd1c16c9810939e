// The built `qpi` binary run as a user runs it, for the integration tests: its exit code and both
// streams, and the child itself for tests that send it a signal.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const CLI = join(__dirname, '..', '..', '..', 'dist', 'cli.js');

export interface QpiResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts qpi; `done` settles when it has exited and its streams are closed. */
export function startQpi(args: string[], extraEnv: Record<string, string> = {}): { child: ChildProcess; done: Promise<QpiResult> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...extraEnv } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<QpiResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
  return { child, done };
}

export function qpi(args: string[], extraEnv: Record<string, string> = {}): Promise<QpiResult> {
  return startQpi(args, extraEnv).done;
}

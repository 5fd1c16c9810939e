// Types of the parts of host.mjs that TypeScript callers (the demo) use.

export interface StartedHost {
  /** code-server's address, http://127.0.0.1:<port>. */
  url: string;
  /** The workspace folder: a copy of samples/ inside the host's temporary folder. */
  ws: string;
  /** The host's temporary folder (user data, extensions, workspace), removed by stop(). */
  run: string;
  logFile: string;
  /** Ends code-server's process group and removes the temporary folder. */
  stop(): Promise<void>;
}

/** Installs Node 24 and code-server into the project's cache when absent. */
export function install(): void;
/** Packs the extension with vsce (the bundles must be built); returns the .vsix path. */
export function packageVsix(out?: string): string;
/** Starts code-server on a copy of samples/; `workspaceSettings` become its .vscode/settings.json. */
/** `testDriver` turns on the smoke-test driver the in-host suite needs; it also hides every notification toast. */
export function startHost(options?: { env?: Record<string, string>; vsix?: string; workspaceSettings?: Record<string, unknown>; testDriver?: boolean }): Promise<StartedHost>;
export const CHROMIUM_ARGS: string[];
/** A sentence naming both when the README's package figures differ from vsce's summary (of the last package by default); undefined when they agree. */
export function readmeFiguresDiffer(summary?: string): string | undefined;

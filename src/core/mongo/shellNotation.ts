// Placeholder until the MongoDB reader lands (issue 2): refuses everything.
export function readShellNotation(_text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  return { ok: false, error: 'Reading mongo shell notation is not implemented yet.' };
}

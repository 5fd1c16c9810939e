// What the benchmarks that run against the test servers share: the --runs argument, the servers'
// addresses from scripts/with-servers.mjs, and the median they print.

/** `--runs N` from the command line, or the benchmark's own default. */
export function runsArg(fallback: number): number {
  const i = process.argv.indexOf('--runs');
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

/** A server address set by scripts/with-servers.mjs (QPI_TEST_MONGO_URI, QPI_TEST_PG_URI). */
export function serverUri(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this under scripts/with-servers.mjs, which starts the servers.`);
  return v;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

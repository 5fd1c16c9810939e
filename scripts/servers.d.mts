// Types of the parts of servers.mjs that TypeScript callers (the demo, the truth bench) use.
/** Downloads, checks and unpacks the mongod 6.0.5 binary once into the project's cache; returns its path. */
export function fetchMongod(): Promise<string>;

/** What startServers gives: the environment the commands see (QPI_TEST_MONGO_URI, QPI_TEST_PG_URI, ...). */
export interface ServersState {
  env: Record<string, string>;
}
/** Starts MongoDB and PostgreSQL on free ports in a fresh temporary folder. */
export function startServers(): Promise<ServersState>;
/** Stops what startServers started and deletes its folder. */
export function stopServers(state: ServersState | null): Promise<void>;

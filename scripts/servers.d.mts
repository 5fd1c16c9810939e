// Types of the parts of servers.mjs that TypeScript callers (the demo) use.
/** Downloads, checks and unpacks the mongod 6.0.5 binary once into the project's cache; returns its path. */
export function fetchMongod(): Promise<string>;

// The servers the integration tests use, as exported by scripts/with-servers.mjs, and small helpers to
// read plans. Tests fail with a clear sentence when run without the wrapper instead of being skipped.

import { strict as assert } from 'node:assert';
import { createServer } from 'node:net';
import type { ExplainResult } from '../../../src/adapters/types';
import type { Plan, PlanNode } from '../../../src/core/model';

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the integration tests with "npm run test:integration", which starts the servers.`);
  return v;
}

export const env = {
  get mongoUri(): string {
    return required('QPI_TEST_MONGO_URI');
  },
  get pgUri(): string {
    return required('QPI_TEST_PG_URI');
  },
  get pwUser(): string {
    return required('QPI_TEST_PW_USER');
  },
  get pwPassword(): string {
    return required('QPI_TEST_PW_PASSWORD');
  },
};

/** The plan of an explain result; fails the test with the loader's sentence when it was refused. */
export function planOf(result: ExplainResult): Plan {
  if (!result.load.ok) assert.fail(`the explain output was not read: ${result.load.refusal}`);
  return result.load.plan;
}

export function nodesOf(plan: Plan, kind: string): PlanNode[] {
  return plan.nodes.filter((n) => n.kind === kind);
}

export function onlyNode(plan: Plan, kind: string): PlanNode {
  const found = nodesOf(plan, kind);
  assert.equal(found.length, 1, `one ${kind} node expected, found ${found.length} in ${shape(plan)}`);
  return found[0]!;
}

/** The tree as "A>B>C" (children in brackets when there are several), for messages and shape checks. */
export function shape(plan: Plan): string {
  const draw = (n: PlanNode): string => {
    if (n.children.length === 0) return n.kind;
    if (n.children.length === 1) return `${n.kind}>${draw(n.children[0]!)}`;
    return `${n.kind}(${n.children.map(draw).join(', ')})`;
  };
  return draw(plan.root);
}

/** A port on which nothing listens: a server that is down. */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}


/** The test PostgreSQL server's URI, pointed at another database. */
export function pgUriFor(db: string): string {
  const u = new URL(env.pgUri);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * Shared buffers (hit + read) at the root of a statement's plan under EXPLAIN (ANALYZE, BUFFERS), with one
 * index built first inside a transaction that is rolled back (none for null); `noSeqScan` keeps the
 * planner off a sequential scan, so the index is used where it can be.
 */
export async function rootBuffers(client: { query(text: string): Promise<{ rows: Record<string, unknown>[] }> }, sql: string, ddl: string | null, noSeqScan = false): Promise<number> {
  await client.query('BEGIN');
  try {
    if (ddl !== null) {
      await client.query(ddl.replace(/\bCONCURRENTLY\s+/, '').replace(/;\s*$/, ''));
      if (noSeqScan) await client.query('SET LOCAL enable_seqscan = off');
    }
    const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
    const plan = (r.rows[0]!['QUERY PLAN'] as { Plan: Record<string, number> }[])[0]!.Plan;
    return Number(plan['Shared Hit Blocks'] ?? 0) + Number(plan['Shared Read Blocks'] ?? 0);
  } finally {
    await client.query('ROLLBACK');
  }
}

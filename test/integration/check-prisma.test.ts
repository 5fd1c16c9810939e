// `qpi check` writes Prisma calls with the table and columns the repository's schema.prisma maps them to
// (`@@map`, `@map`), as `qpi lint` and the editor write them: on real PostgreSQL (started by
// scripts/with-servers.mjs), a call on a mapped model is explained on the mapped table instead of being
// reported as a query on a table named after the model, which does not exist.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { run } from '../../src/cli/main';
import { capturedIo } from './support/cliIo';
import { env, pgUriFor } from './support/env';

const DB = 'qpi_check_prisma';

const SCHEMA = `generator client {
  provider = "prisma-client-js"
}

datasource db {
  provider = "postgresql"
  url      = env("DATABASE_URL")
}

model Website {
  id        Int      @id @default(autoincrement())
  ownerId   Int      @map("owner_id")
  createdAt DateTime @default(now()) @map("created_at")

  @@map("website")
}
`;

const CALLS = `import { PrismaClient } from '@prisma/client';

const prisma = new PrismaClient();

export function websitesOf() {
  return prisma.website.findMany({ where: { ownerId: 42 }, orderBy: { createdAt: 'desc' } });
}
`;

interface CheckJson {
  queries: { file: string; outcome: string; notExplainable?: string; results: { rule: string }[] }[];
}

describe('qpi check with a mapped Prisma model', function () {
  let app: string;

  before(async function () {
    const admin = new Client({ connectionString: env.pgUri });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
      await admin.query(`CREATE DATABASE ${DB}`);
    } finally {
      await admin.end();
    }
    const c = new Client({ connectionString: pgUriFor(DB) });
    await c.connect();
    try {
      await c.query('CREATE TABLE website (id serial PRIMARY KEY, owner_id int NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
      await c.query('INSERT INTO website (owner_id) SELECT g % 100 FROM generate_series(1, 2000) g');
      await c.query('ANALYZE website');
    } finally {
      await c.end();
    }
    app = mkdtempSync(join(tmpdir(), 'qpi-check-prisma-'));
    mkdirSync(join(app, 'prisma'));
    mkdirSync(join(app, 'src'));
    writeFileSync(join(app, 'prisma', 'schema.prisma'), SCHEMA);
    writeFileSync(join(app, 'src', 'websites.ts'), CALLS);
  });

  after(async function () {
    if (app) rmSync(app, { recursive: true, force: true });
    const admin = new Client({ connectionString: env.pgUri });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`).catch(() => {});
    await admin.end();
  });

  it('explains the call on the mapped table and columns, and the gate names the index it wants there', async function () {
    const io = capturedIo();
    const code = await run(['check', join(app, 'src'), '--uri', pgUriFor(DB), '--lock', join(app, 'qpi.lock.json'), '--json'], io);
    const doc = JSON.parse(io.out) as CheckJson;
    assert.equal(doc.queries.length, 1, io.err);
    const q = doc.queries[0]!;
    assert.equal(q.file, 'src/websites.ts');
    assert.notEqual(q.outcome, 'not-explainable', q.notExplainable);
    assert.equal(q.notExplainable, undefined);
    const rules = q.results.map((r) => r.rule);
    assert.ok(!rules.includes('qpi.does-not-exist'), rules.join(', '));
    // With no index on owner_id the filter cannot be served: a structural finding on the mapped table.
    assert.ok(rules.includes('qpi.collection-scan'), rules.join(', '));
    assert.equal(code, 3, io.err);
    assert.match(io.out, /website/);
    assert.match(io.out, /owner_id/);
  });
});

// A query on a family of collections (`db.collection('app_users' + appId)`) on a real server: the finder
// names the family, the adapter lists its collections largest first, Explain runs on the largest, the
// trial verifies the index there, and the index built lands on that collection only.

import { strict as assert } from 'node:assert';
import { MongoClient, type Db } from 'mongodb';
import { openMongoAdvice, type MongoAdviceSession } from '../../src/adapters/advise';
import { AdviceService } from '../../src/adapters/adviceService';
import { connectMongo, type MongoConnection } from '../../src/adapters/mongodb';
import { chooseFamilyMember, explainTargets, onFamilyMember, parseMongoCreateIndex, parseMongoQuery } from '../../src/core/index';
import { env } from './support/env';

const DB = 'qpi_family';

const SOURCE = [
  `import { MongoClient } from 'mongodb';`,
  `const client = new MongoClient(process.env.MONGO_URL);`,
  `export const active = (appId) => client.db('${DB}').collection('app_users' + appId).find({ country: 'NL' }).sort({ ls: -1 }).limit(20).toArray();`,
].join('\n');

/** Users of one application: `countries` spread over the documents, a last-seen time each. */
function users(n: number): { uid: number; country: string; ls: number }[] {
  const countries = ['NL', 'DE', 'FR', 'US', 'JP', 'BR', 'IN', 'ZA'];
  return Array.from({ length: n }, (_, i) => ({ uid: i, country: countries[i % countries.length]!, ls: (i * 7919) % 100_000 }));
}

describe('A family of collections on a real MongoDB', function () {
  this.timeout(120_000);
  let client: MongoClient;
  let db: Db;
  let conn: MongoConnection;
  let session: MongoAdviceSession;

  before(async () => {
    client = await MongoClient.connect(env.mongoUri);
    db = client.db(DB);
    await db.dropDatabase();
    await db.collection('app_users1').insertMany(users(400));
    await db.collection('app_users2').insertMany(users(3_000));
    // Not of the family: the name without the run-time part, and another prefix.
    await db.collection('app_users').insertOne({ uid: 0 });
    await db.collection('apps').insertOne({ name: 'x' });
    conn = await connectMongo({ uri: env.mongoUri });
    session = await openMongoAdvice({ uri: env.mongoUri, database: DB });
  });

  after(async () => {
    await session?.close();
    await conn?.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  it('lists the family largest first, explains on the largest, and builds the verified index on it only', async () => {
    const [target] = explainTargets(SOURCE, 'script', 'ts');
    assert.ok(target && !target.problem, target?.problem);
    assert.match(target.text, /getCollection\("app_users\*"\)/);

    const members = await conn.familyCollections('app_users*', DB);
    assert.deepEqual(members, [{ name: 'app_users2', documents: 3_000 }, { name: 'app_users1', documents: 400 }]);
    const choice = chooseFamilyMember('app_users*', members);
    assert.equal(choice?.name, 'app_users2');
    assert.equal(choice?.sentence, 'Explained on app_users2, the largest of 2 collections of the family app_users*, 3,000 documents; the others: app_users1.');

    const parsed = parseMongoQuery(onFamilyMember(target.text, 'app_users*', choice!.name));
    if (!parsed.ok) assert.fail(parsed.error);
    const command = parsed.command;
    assert.equal(command.collection, 'app_users2');
    assert.equal(command.database, DB);
    const explained = await conn.explain(command, { verbosity: 'executionStats' });
    assert.ok(explained.load.ok);
    assert.match(explained.rawText, /qpi_family\.app_users2/);
    assert.equal(explained.load.plan.root.metrics.docsExamined ?? explained.load.plan.nodes.find((n) => n.kind === 'COLLSCAN')?.metrics.docsExamined, 3_000);

    const service = new AdviceService();
    const live = await service.mongo(session, command, { connection: 'local' });
    const top = live.advice.suggestions[0]!;
    assert.equal(top.action, 'create');
    await service.measureMongo(session, command, live, { sampleSize: 3_000 });
    const verified = live.advice.suggestions.find((s) => s.verification.status === 'verified');
    assert.ok(verified?.createText, 'the trial verified a suggestion');
    assert.match(verified.createText, /^db\.app_users2\.createIndex/);

    const spec = parseMongoCreateIndex(verified.createText);
    if (!spec.ok) assert.fail(spec.error);
    const built = await conn.createIndex(spec.value, { database: DB });
    assert.equal(built.created, true);
    const keyed = async (name: string) => (await conn.listIndexes(name, DB)).map((ix) => ix.name).sort();
    assert.deepEqual(await keyed('app_users2'), ['_id_', built.name].sort());
    assert.deepEqual(await keyed('app_users1'), ['_id_'], 'the other collection of the family has no new index');
  });

  it('finds no collection of a family the database does not hold', async () => {
    const members = await conn.familyCollections('events_*', DB);
    assert.deepEqual(members, []);
    assert.equal(chooseFamilyMember('events_*', members), undefined);
  });
});

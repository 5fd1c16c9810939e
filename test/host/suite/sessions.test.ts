// In the real host: Explain keeps its session open between two Explains of a connection (the server sees
// the same backends), still prints its step line, and a removed connection's session is closed on the
// server. The connection's URI names its application, so the test counts exactly its backends.

import assert from 'node:assert/strict';
import pg from 'pg';
import * as vscode from 'vscode';
import { Commands } from '../../../src/extension/commands';
import type { ConnectionSpec } from '../../../src/extension/connections/spec';
import type { ExplainSummary } from '../../../src/extension/explain';
import type { ExtensionHandle } from '../../../src/extension/main';
import { until } from '../../until';

const EXTENSION_ID = 'query-plan-inspector.query-plan-inspector';
const APP = 'qpi_host_kept_session';

/** The samples' database, which npm run test:host starts and loads. */
function samplesUri(): string {
  assert.ok(process.env.QPI_SAMPLES_PG_URI, 'QPI_SAMPLES_PG_URI is not set: run these tests with npm run test:host (it starts the servers).');
  return process.env.QPI_SAMPLES_PG_URI;
}

export function sessionTests(): void {
  describe('Explain keeps its session between Explains', () => {
    let handle: ExtensionHandle;
    let admin: pg.Client;
    const backends = async (): Promise<number[]> => (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid', [APP])).rows.map((r) => r.pid);

    before(async () => {
      const ext = vscode.extensions.getExtension<ExtensionHandle>(EXTENSION_ID);
      assert.ok(ext);
      handle = await ext.activate();
      admin = new pg.Client({ connectionString: samplesUri() });
      await admin.connect();
    });

    after(async () => {
      await admin.end();
    });

    it('explains twice on the same backends, prints the step line of each, and closes them when the connection is removed', async () => {
      const uri = new URL(samplesUri());
      uri.searchParams.set('application_name', APP);
      const spec = await vscode.commands.executeCommand<ConnectionSpec | undefined>(Commands.addConnection, { name: 'kept session', uri: uri.toString(), test: false });
      assert.ok(spec, handle.lastError());
      const log = handle.parts.log;
      const lines: string[] = [];
      const info = log.info.bind(log);
      log.info = (m: string) => {
        lines.push(m);
        info(m);
      };
      try {
        const explain = async (): Promise<number[]> => {
          const r = await vscode.commands.executeCommand<ExplainSummary | undefined>(Commands.explainQuery, {
            text: 'SELECT id, created_at FROM orders WHERE country_id = 1 ORDER BY created_at DESC LIMIT 10', engine: 'postgres', connectionId: spec.id,
          });
          assert.ok(r, handle.lastError());
          // The measurement opens a session of its own: counted once it has ended.
          await handle.explainer.measuring;
          return backends();
        };
        const first = await explain();
        assert.equal(first.length, 2, 'the explain connection and the catalog connection stay open');
        assert.deepEqual(await explain(), first, 'the second Explain used the same backends');
        const stepLines = lines.filter((l) => /step by step: find \d+ ms, prepare \d+ ms, connect \d+ ms, explain [\d,]+ ms, .*\(total [\d,]+ ms\)\.$/.test(l));
        assert.equal(stepLines.length, 2, lines.join('\n'));
      } finally {
        log.info = info;
        assert.equal(await vscode.commands.executeCommand(Commands.removeConnection, { id: spec.id, confirm: false }), true);
      }
      await until('the removed connection\'s backends to end', async () => (await backends()).length === 0);
    });
  });
}

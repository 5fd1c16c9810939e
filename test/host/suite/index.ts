// Entry point code-server's extension host calls (extensionTestsPath): runs the mocha suite inside the
// real host, with the full vscode API, and prints the plain closing line "N passed, N failed".

import Mocha from 'mocha';
import { doesNotExistTests } from './doesNotExist.test';
import { extensionTests } from './extension.test';
import { languageServerTests } from './languageServer.test';
import { lockTests } from './lock.test';
import { realCodeTests } from './realCode.test';
import { sessionTests } from './sessions.test';
import { settingsConnectionTests } from './settingsConnections.test';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec', ...(process.env.QPI_HOST_GREP ? { grep: process.env.QPI_HOST_GREP } : {}) });
  mocha.suite.emit('pre-require', globalThis, 'extension.test', mocha);
  // First, while no connection is chosen for the folder: its settings' default is what they check.
  settingsConnectionTests();
  // Also before any binding: the repository's schema speaks only where no connection sends index lists.
  realCodeTests();
  extensionTests();
  sessionTests();
  languageServerTests();
  doesNotExistTests();
  lockTests();
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      console.log(`${runner.stats?.passes ?? 0} passed, ${runner.stats?.failures ?? 0} failed, ${runner.stats?.pending ?? 0} skipped`);
      if (failures) reject(new Error(`${failures} tests failed`));
      else resolve();
    });
  });
}

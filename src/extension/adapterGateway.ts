// The Gateway backed by the database adapters (src/adapters). Loaded lazily by main.ts on the first
// command that needs a server, so activation never loads a driver.

import { UserError } from './commands';
import type { Gateway } from './gateway';
import type { Log } from './log';

export function createGateway(_log: Log): Gateway {
  const unavailable = (): never => {
    throw new UserError('Live explain is not available in this build yet: open a saved plan with Open Plan instead.');
  };
  return {
    test: async () => unavailable(),
    explain: () => ({ done: Promise.resolve().then(unavailable), cancel: async () => undefined }),
  };
}

// The per-file caps the server tells the extension about (CapReached), once per document and change.

import { CapReached, type CapReachedParams } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import type { DocState } from '../documents';

/** Tells the client a document hit a cap (or none any more), once per change. */
export function sayCap(ctx: Pick<ServerContext, 'port'>, state: DocState, cap: CapReachedParams['cap'], limit?: number, size?: number): void {
  const said = cap ?? '';
  if ((state.capSaid ?? '') === said) return;
  state.capSaid = said;
  ctx.port.sendNotification(CapReached, { uri: state.uri, cap, ...(limit !== undefined ? { limit } : {}), ...(size !== undefined ? { size } : {}) });
  if (cap) ctx.port.log(`${state.uri} has ${size!.toLocaleString('en-US')} ${cap}, over the cap of ${limit!.toLocaleString('en-US')}: ${cap === 'characters' ? 'it is not analysed' : `only its first ${limit!.toLocaleString('en-US')} are analysed`}.`);
}

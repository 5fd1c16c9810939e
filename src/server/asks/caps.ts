// The per-file caps the server tells the extension about (CapReached), once per document and change.

import { formatCount } from '../../core/index';
import { CapReached, type CapReachedParams } from '../../protocol/languageServer';
import type { ServerContext } from '../context';
import type { DocState } from '../documents';

/** Tells the client a document hit a cap (or none any more), once per change. */
export function sayCap(ctx: Pick<ServerContext, 'port'>, state: DocState, cap: CapReachedParams['cap'], limit?: number, size?: number): void {
  const said = cap ?? '';
  if ((state.capSaid ?? '') === said) return;
  state.capSaid = said;
  ctx.port.sendNotification(CapReached, { uri: state.uri, cap, ...(limit !== undefined ? { limit } : {}), ...(size !== undefined ? { size } : {}) });
  if (cap) ctx.port.log(`${state.uri} has ${formatCount(size!)} ${cap}, over the cap of ${formatCount(limit!)}: ${cap === 'characters' ? 'it is not analysed' : `only its first ${formatCount(limit!)} are analysed`}.`);
}

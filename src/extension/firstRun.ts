// What the extension does once per install, decided without the editor API (unit-tested in Node): the
// walkthrough is offered the first time the extension starts on a machine, never again, whether the user
// opened it or not. The mark lives in the extension's global state, which is kept per install.

/** The global state key that marks the walkthrough as offered. */
export const WALKTHROUGH_OFFERED = 'queryPlanInspector.walkthroughOffered';
/** The walkthrough, as `workbench.action.openWalkthrough` names it: publisher.name#id (package.json). */
export const WALKTHROUGH_ID = 'query-plan-inspector.query-plan-inspector#firstHour';

/** The part of VS Code's Memento this needs. */
export interface FirstRunState {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

/**
 * True the first time it is asked on an install, and marks the offer made before anything is shown, so a
 * second window opened at once does not offer it too.
 */
export async function claimWalkthroughOffer(state: FirstRunState): Promise<boolean> {
  if (state.get<boolean>(WALKTHROUGH_OFFERED) === true) return false;
  await state.update(WALKTHROUGH_OFFERED, true);
  return true;
}

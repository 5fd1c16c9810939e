// The questions asked before anything is written or built on a user's server, and whether to measure
// MongoDB suggestions on Explain: a modal and a notification by default. The extension's own tests answer
// them by setting `consent` and `measureAnswer`.

import type { ConsentPrompt } from './advice';
import type { MeasureAnswer } from './connections/measureChoice';

export class Prompts {
  /** Answers the questions asked before a trial or a build; the modal when unset. */
  consent?: ConsentPrompt;
  /** Answers the measure question; the notification when unset. */
  measureAnswer?: () => Promise<MeasureAnswer | undefined>;
}

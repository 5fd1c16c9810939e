// Whether a MongoDB Explain measures its suggestions at once: MongoDB has no hypothetical indexes, so
// measuring copies a random sample into a scratch collection of the same server, indexes it, queries it
// and drops it. That writes on the user's server, so the extension asks once per connection (Always on
// this connection / This Time / Never) and keeps the answer per connection, changeable from the
// Connections view. The `mongodb.measureOnExplain` setting still measures everywhere when on.
// The decision is written without the editor API (unit-tested in Node); the caller asks.

/** The answer kept for a connection. */
export type MeasureChoice = 'always' | 'never';

/** What the question offers. */
export type MeasureAnswer = 'always' | 'this-time' | 'never';

/** The part of VS Code's Memento this needs. */
export interface ChoiceState {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

const KEY = 'queryPlanInspector.mongoMeasureChoices';

/** The answers kept per connection id, in the extension's global state (not a secret: no credentials). */
export class MeasureChoices {
  /** Connections whose question went unanswered in this window: not asked again until the window reloads. */
  private readonly unanswered = new Set<string>();

  constructor(private readonly state: ChoiceState) {}

  /** True once the question went unanswered for the connection in this window. */
  wasIgnored(connectionId: string): boolean {
    return this.unanswered.has(connectionId);
  }

  ignored(connectionId: string): void {
    this.unanswered.add(connectionId);
  }

  get(connectionId: string): MeasureChoice | undefined {
    return this.all()[connectionId];
  }

  /** Keeps an answer, or forgets it (undefined: ask again). */
  async set(connectionId: string, choice: MeasureChoice | undefined): Promise<void> {
    this.unanswered.delete(connectionId);
    const all = { ...this.all() };
    if (choice === undefined) delete all[connectionId];
    else all[connectionId] = choice;
    await this.state.update(KEY, all);
  }

  private all(): Record<string, MeasureChoice> {
    return this.state.get<Record<string, MeasureChoice>>(KEY) ?? {};
  }
}

/**
 * True when this MongoDB Explain measures: the setting on, the connection's kept answer, else the
 * question's answer now (kept when it is Always or Never). An unanswered question measures nothing and
 * is not asked again in this window (the Connections view still changes the answer).
 */
export async function decideMongoMeasure(
  choices: MeasureChoices, connectionId: string, settingOn: boolean, ask: () => Promise<MeasureAnswer | undefined>,
): Promise<boolean> {
  if (settingOn) return true;
  const kept = choices.get(connectionId);
  if (kept) return kept === 'always';
  if (choices.wasIgnored(connectionId)) return false;
  const answer = await ask();
  if (answer === 'always' || answer === 'never') await choices.set(connectionId, answer);
  else if (answer === undefined) choices.ignored(connectionId);
  return answer === 'always' || answer === 'this-time';
}

/** The question, as one sentence and its buttons, for a connection. */
export function measureQuestion(connectionName: string): { message: string; buttons: { label: string; answer: MeasureAnswer }[] } {
  return {
    message: `Measure the suggested indexes on ${connectionName}? A random sample is copied into a scratch collection on the same server, indexed, queried and dropped; your collections are not changed.`,
    buttons: [
      { label: `Always on ${connectionName}`, answer: 'always' },
      { label: 'This Time', answer: 'this-time' },
      { label: 'Never', answer: 'never' },
    ],
  };
}

// The extension's settings under `queryPlanInspector.*` that Explain, Verify and the sessions read at
// each use, so a changed setting applies without a reload.

import * as vscode from 'vscode';
import type { ExplainVerbosity } from '../core/index';

export const SETTINGS = 'queryPlanInspector';

/** The largest sample a trial may copy, as for `qpi advise --sample`. */
const MAX_TRIAL_SAMPLE = 100_000;

export function settings() {
  const c = vscode.workspace.getConfiguration(SETTINGS);
  return {
    verbosity: c.get<ExplainVerbosity>('mongodb.verbosity', 'executionStats'),
    analyze: c.get<boolean>('postgres.analyze', true),
    buffers: c.get<boolean>('postgres.buffers', true),
    timeoutMs: Math.max(1, c.get<number>('explainTimeoutSeconds', 60)) * 1000,
    connectTimeoutMs: Math.max(1, c.get<number>('connectTimeoutSeconds', 10)) * 1000,
    trialSampleSize: Math.min(MAX_TRIAL_SAMPLE, Math.max(1, Math.floor(c.get<number>('mongodb.trialSampleSize', 1000)))),
    measureOnExplain: { postgres: c.get<boolean>('postgres.measureOnExplain', true), mongodb: c.get<boolean>('mongodb.measureOnExplain', false) },
  };
}

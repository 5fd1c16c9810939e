// A multi-step quick input: every step of a flow (engine, form, address, password, name...) is shown in
// the same quick input widget, the next step before the previous one goes away. Separate
// showQuickPick/showInputBox calls close the widget between steps, which hands the keyboard back to
// whatever had it before (often the plan panel), so the next keystrokes went there; here the widget
// keeps the focus from the first step to the last. Each step shows its number of the total, which the
// flow updates as it learns which branch it is on.

import * as vscode from 'vscode';
import { Dismissed } from '../commands';

export interface StepInputOptions {
  title: string;
  value?: string;
  prompt?: string;
  placeholder?: string;
  password?: boolean;
  /** A sentence when the value is refused, undefined when it is accepted. */
  validate?: (value: string) => string | undefined;
}

export class StepFlow implements vscode.Disposable {
  private current: vscode.QuickInput | undefined;
  private step = 0;

  /** `total` is the number of steps expected; `expect` changes it when a branch is chosen. */
  constructor(private total: number) {}

  expect(total: number): void {
    this.total = Math.max(total, this.step);
  }

  async pick<T extends vscode.QuickPickItem>(items: T[], options: { title: string; placeholder?: string }): Promise<T> {
    const qp = vscode.window.createQuickPick<T>();
    qp.items = items;
    qp.placeholder = options.placeholder;
    return this.run(qp, options.title, (accept) => {
      qp.onDidAccept(() => {
        const chosen = qp.selectedItems[0] ?? qp.activeItems[0];
        if (chosen) accept(chosen);
      });
    });
  }

  async input(options: StepInputOptions): Promise<string> {
    const box = vscode.window.createInputBox();
    box.value = options.value ?? '';
    box.prompt = options.prompt;
    box.placeholder = options.placeholder;
    box.password = options.password === true;
    return this.run(box, options.title, (accept) => {
      box.onDidChangeValue((v) => {
        box.validationMessage = options.validate?.(v);
      });
      box.onDidAccept(() => {
        const problem = options.validate?.(box.value);
        box.validationMessage = problem;
        if (problem === undefined) accept(box.value);
      });
    });
  }

  private run<R>(widget: vscode.QuickInput, title: string, wire: (accept: (v: R) => void) => void): Promise<R> {
    this.step++;
    widget.title = title;
    widget.step = this.step;
    widget.totalSteps = Math.max(this.total, this.step);
    widget.ignoreFocusOut = true;
    return new Promise<R>((resolve, reject) => {
      let settled = false;
      wire((v) => {
        if (settled) return;
        settled = true;
        resolve(v);
      });
      widget.onDidHide(() => {
        if (settled) return;
        settled = true;
        reject(new Dismissed());
      });
      // Shown before the previous step is disposed: the widget never closes between steps.
      const previous = this.current;
      this.current = widget;
      widget.show();
      previous?.dispose();
    });
  }

  dispose(): void {
    this.current?.dispose();
    this.current = undefined;
  }
}

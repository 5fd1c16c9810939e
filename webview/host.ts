// The channel to whoever hosts the view. Inside VS Code that is acquireVsCodeApi(); standalone (the
// browser tests, a preview page) messages arrive by window.postMessage and outgoing ones are kept in
// `window.qpiOutbox`, announced with a `qpi-outbound` event, and posted to a parent frame if any.

import type { ViewToHostMessage } from '../src/protocol/webview';
import type { ViewState } from './store';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  interface Window {
    acquireVsCodeApi?: () => VsCodeApi;
    qpiOutbox?: ViewToHostMessage[];
  }
}

export interface Host {
  /** True inside VS Code. */
  readonly embedded: boolean;
  post(message: ViewToHostMessage): void;
  getState(): ViewState;
  setState(state: ViewState): void;
}

export function connectHost(): Host {
  const api = typeof window.acquireVsCodeApi === 'function' ? window.acquireVsCodeApi() : undefined;
  if (api) {
    return {
      embedded: true,
      post: (m) => api.postMessage(m),
      getState: () => {
        const s = api.getState();
        return s && typeof s === 'object' ? (s as ViewState) : {};
      },
      setState: (s) => api.setState(s),
    };
  }
  const outbox: ViewToHostMessage[] = [];
  window.qpiOutbox = outbox;
  let state: ViewState = {};
  return {
    embedded: false,
    post: (m) => {
      outbox.push(m);
      window.dispatchEvent(new CustomEvent('qpi-outbound', { detail: m }));
      if (window.parent !== window) window.parent.postMessage(m, '*');
    },
    getState: () => state,
    setState: (s) => {
      state = s;
    },
  };
}

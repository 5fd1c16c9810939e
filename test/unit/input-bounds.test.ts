// Every reader answers hostile or damaged input with one sentence: nesting and size limits are checked
// before parsing, JSON faults are named in words with line and column, and a PostgreSQL text plan cut at
// a line boundary is never analysed as if it were whole.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlan, MAX_PLAN_NODES } from '../../src/core/load';
import { MAX_SHELL_VALUES } from '../../src/core/mongo/shellNotation';

const CORPUS = join(__dirname, '..', 'fixtures', 'corpus');

function refusal(text: string): string {
  const r = loadPlan(text);
  assert.ok(!r.ok, 'refused');
  assert.match(r.refusal, /^[^\n]+\.$/, 'one sentence');
  assert.doesNotMatch(r.refusal, /internal error|call stack|heap/i);
  return r.refusal;
}

describe('reader limits', () => {
  it('refuses an XML plan nested 2,000 deep like a JSON plan nested past 1,000 levels', () => {
    const d = 2000;
    const xml = '<explain xmlns="http://www.postgresql.org/2009/explain"><Query><Plan><Node-Type>Append</Node-Type><Plans>' +
      '<Plan><Node-Type>Append</Node-Type><Plans>'.repeat(d) + '</Plans></Plan>'.repeat(d) + '</Plans></Plan></Query></explain>';
    let json = '{"Node Type": "Seq Scan"}';
    for (let i = 0; i < d; i++) json = `{"Node Type": "Append", "Plans": [${json}]}`;
    assert.equal(refusal(xml), refusal(`[{"Plan": ${json}}]`));
    assert.match(refusal(xml), /nested more than 1000 levels/);
  });

  it('refuses XML elements nested far deeper than any plan', () => {
    const xml = '<explain><Query>' + '<Other>'.repeat(20000) + '</Other>'.repeat(20000) + '</Query></explain>';
    assert.match(refusal(xml), /^The XML is nested more than \d+ elements deep/);
  });

  it('refuses 40 MB of shell notation with millions of tiny stages, and of tiny values', () => {
    const stages = `{queryPlanner: {winningPlan: {stage: "OR", inputStages: [${'{stage:"A"},'.repeat(3_500_000)}]}}}`;
    assert.ok(stages.length > 40e6);
    assert.equal(refusal(stages), `The plan has more than ${MAX_PLAN_NODES.toLocaleString('en-US')} nodes, more than this reader takes.`);
    const values = `{queryPlanner: {winningPlan: {stage: "COLLSCAN", filter: [${'{a:1},'.repeat(7_000_000)}]}}}`;
    assert.ok(values.length > 40e6);
    assert.match(refusal(values), new RegExp(`^The shell notation holds more than ${MAX_SHELL_VALUES.toLocaleString('en-US')} values`));
  });

  it('refuses JSON plans of either engine past the node limit, counted by the reader as it builds', () => {
    const children = MAX_PLAN_NODES + 1;
    const pg = `[{"Plan": {"Node Type": "Append", "Plans": [${'{"Node Type": "Result"},'.repeat(children - 1)}{"Node Type": "Result"}]}}]`;
    assert.equal(refusal(pg), `The plan has more than ${MAX_PLAN_NODES.toLocaleString('en-US')} nodes, more than this reader takes.`);
    const mongo = `{"queryPlanner": {"winningPlan": {"stage": "OR", "inputStages": [${'{"stage": "IXSCAN"},'.repeat(children - 1)}{"stage": "IXSCAN"}]}}}`;
    assert.equal(refusal(mongo), `The plan has more than ${MAX_PLAN_NODES.toLocaleString('en-US')} nodes, more than this reader takes.`);
    const pipeline = `{"stages": [${'{"$match": {}},'.repeat(children - 1)}{"$match": {}}]}`;
    assert.equal(refusal(pipeline), `The plan has more than ${MAX_PLAN_NODES.toLocaleString('en-US')} nodes, more than this reader takes.`);
    // At the limit itself the plan is read.
    const fits = `{"queryPlanner": {"winningPlan": {"stage": "OR", "inputStages": [${'{"stage": "IXSCAN"},'.repeat(MAX_PLAN_NODES - 2)}{"stage": "IXSCAN"}]}}}`;
    const r = loadPlan(fits);
    assert.ok(r.ok && r.plan.nodes.length === MAX_PLAN_NODES);
  });

  it('refuses 62 MB of YAML or text plan nodes before parsing them', () => {
    const yaml = '- Plan:\n    Node Type: "Append"\n    Plans:\n' + '      - Node Type: "Seq Scan"\n        Relation Name: "t"\n        Total Cost: 1.0\n'.repeat(800_000);
    assert.ok(yaml.length > 62e6);
    assert.match(refusal(yaml), /^The plan has more than [\d,]+ nodes/);
    const text = 'Append  (cost=0.00..1.00 rows=1 width=4)\n' + '  ->  Seq Scan on t  (cost=0.00..1.00 rows=1 width=4)\n'.repeat(1_150_000);
    assert.ok(text.length > 62e6);
    assert.match(refusal(text), /^The plan has more than [\d,]+ nodes/);
  });

  it('refuses a YAML plan nested too deep for its parser, and YAML aliases', () => {
    let yaml = '- Plan:\n    Node Type: "Append"\n';
    let indent = '    ';
    for (let i = 0; i < 1000; i++) {
      yaml += `${indent}Plans:\n${indent}  - Node Type: "Append"\n`;
      indent += '    ';
    }
    assert.match(refusal(yaml), /^The YAML plan is nested more than \d+ levels deep/);
    assert.match(refusal('- Plan:\n    Node Type: &n "Seq Scan"\n    Relation Name: *n\n'), /^The YAML uses an alias at line 3/);
  });
});

describe('JSON refusals', () => {
  const cases: [string, RegExp][] = [
    ['{"queryPlanner": }', /at line 1, column 18: unexpected "}"\.$/],
    ['{"queryPlanner": {"winningPlan":\n  {"stage": "A",, "x": 1}}}', /at line 2, column 17: unexpected ","\.$/],
    ['{"queryPlanner": [1 2]}', /at line 1, column 21: unexpected "2"\.$/],
    ['{"queryPlanner": {"stage": "A"}]', /at line 1, column 32: unexpected "]"\.$/],
    ['{"queryPlanner": "a\nb"}', /at line 1, column 20: the control character U\+000A inside a string\.$/],
    ['{"queryPlanner": 1} trailing', /at line 1, column 21: unexpected "t"\.$/],
  ];
  for (const [text, expected] of cases) {
    it(`names the fault in ${JSON.stringify(text).slice(0, 40)} in words, with line and column`, () => {
      const sentence = refusal(text);
      assert.match(sentence, /^The JSON is malformed at line \d+, column \d+: /);
      assert.match(sentence, expected);
      assert.doesNotMatch(sentence, /is not valid JSON|in JSON at position|Unexpected token|Expected/);
    });
  }

  it('finds the fault in a long text, where the engine quotes it without an offset', () => {
    const head = '{"queryPlanner": {"winningPlan": {"stage": "IXSCAN", "bounds": [';
    const ones = '1, '.repeat(200_000);
    const once = `${head}${ones}@, 2]}}}`;
    assert.match(refusal(once), new RegExp(`^The JSON is malformed at line 1, column ${head.length + ones.length + 1}: unexpected "@"\\.$`));
    const twice = `${head}${ones}@, ${ones}@]}}}`;
    assert.match(refusal(twice), new RegExp(`^The JSON is malformed at line 1, column ${head.length + ones.length + 1}: unexpected "@"\\.$`));
  });

  it('says a cut JSON plan is truncated', () => {
    assert.match(refusal('{"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"'), /ends early .* truncated/);
  });
});

describe('PostgreSQL text plans cut at a line boundary', () => {
  const analysed = readdirSync(CORPUS).filter((f) => f.startsWith('pg-text-') && f.endsWith('.txt')).filter((f) => {
    const text = readFileSync(join(CORPUS, f), 'utf8');
    return /actual time=/.test(text) && /^\s*Execution Time:/m.test(text) && !/Query Text:/.test(text);
  });

  it('has analysed plans with their footer to cut', () => {
    assert.ok(analysed.length >= 5, analysed.join(', '));
  });

  for (const file of analysed) {
    it(`never reads a cut ${file} as a whole plan`, () => {
      const lines = readFileSync(join(CORPUS, file), 'utf8').split('\n');
      const footer = lines.findIndex((l) => /^\s*(Planning|Execution) Time:/.test(l));
      for (let keep = 1; keep < footer; keep++) {
        const r = loadPlan(lines.slice(0, keep).join('\n'));
        if (r.ok) assert.ok(r.plan.warnings.some((w) => /cut short/.test(w)), `${keep} of ${lines.length} lines read without a warning`);
      }
    });
  }

  it('refuses one line of a plan whose node needs inputs, naming the line', () => {
    const plan = [
      'Hash Join  (cost=1.09..2.20 rows=4 width=8)',
      '  Hash Cond: (a.id = b.id)',
      '  ->  Seq Scan on a  (cost=0.00..1.04 rows=4 width=4)',
      '  ->  Hash  (cost=1.04..1.04 rows=4 width=4)',
      '        ->  Seq Scan on b  (cost=0.00..1.04 rows=4 width=4)',
    ];
    assert.ok(loadPlan(plan.join('\n')).ok);
    assert.equal(refusal(plan[0]!), 'The plan text is cut after line 1: the Hash Join on line 1 has none of the 2 inputs it always has, so the rest of the tree is missing; copy the whole plan.');
    assert.match(refusal(plan.slice(0, 4).join('\n')), /^The plan text is cut after line 4: the Hash on line 4 has none of the 1 input/);
  });
});

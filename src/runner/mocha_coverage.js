// swe-forge: per-test line coverage under mocha (`--require`d by swe-forge's coverage run).
// The repository's own modules are instrumented as they load (istanbul-lib-hook and
// istanbul-lib-instrument, Debian's node packages; not node_modules, not the test files named
// in $SWE_FORGE_MOCHA_TEST_FILES), and root hooks compare istanbul's counters before and after
// each test (coverage_core.js, at $SWE_FORGE_COVERAGE_CORE). What runs while mocha loads the
// test files, and in before/after hooks, is recorded as run outside tests. At the end one JSON
// line per test file goes to $SWE_FORGE_MOCHA_COVERAGE, as the jest coverage run writes them:
// {"file": "<test file>", "tests": {"<full title>": {"<source>": [lines]}}, "outside": {...}}.
'use strict';
const fs = require('fs');
const path = require('path');
const { hookRequire } = require('istanbul-lib-hook');
const { createInstrumenter } = require('istanbul-lib-instrument');

const root = process.cwd();
const rel = (file) => path.relative(root, file).split(path.sep).join('/');
const testFiles = new Set(JSON.parse(process.env.SWE_FORGE_MOCHA_TEST_FILES || '[]'));
const instrumenter = createInstrumenter({ coverageVariable: '__coverage__', esModules: true });
hookRequire(
  (file) => {
    const r = rel(file);
    return !r.startsWith('../') && !r.split('/').includes('node_modules') && !testFiles.has(r);
  },
  (code, { filename }) => instrumenter.instrumentSync(code, filename),
);
const { counters, grown, merge } = require(process.env.SWE_FORGE_COVERAGE_CORE).tracker(
  () => global.__coverage__ || {},
);

let last = {};
let before = null;
const byFile = {};
const outside = {};

exports.mochaHooks = {
  beforeEach() {
    const now = counters();
    merge(outside, grown(last, now));
    before = now;
  },
  afterEach() {
    const now = counters();
    const t = this.currentTest;
    const file = rel(t.file || '');
    const tests = byFile[file] || (byFile[file] = {});
    const name = t.fullTitle();
    const lines = grown(before, now);
    if (name in tests) merge(tests[name], lines); else tests[name] = lines;
    last = now;
  },
  afterAll() {
    merge(outside, grown(last, counters()));
    const out = process.env.SWE_FORGE_MOCHA_COVERAGE;
    if (!out) return;
    const files = Object.keys(byFile);
    const lines = files.map((file, i) =>
      JSON.stringify({ file, tests: byFile[file], outside: i === 0 ? outside : {} }),
    );
    if (files.length === 0) lines.push(JSON.stringify({ file: '', tests: {}, outside }));
    fs.writeFileSync(out, lines.join('\n') + '\n');
  },
};

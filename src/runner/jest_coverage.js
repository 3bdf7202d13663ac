// swe-forge: per-test line coverage under jest, from istanbul's counters (jest --coverage
// instruments the sources; swe-forge's coverage run registers this file after the project's
// own setupFilesAfterEnv). Before each test the counters are copied; after it, the statements
// and functions whose counts grew are the test's. What grows outside any test (loading the
// test file and the modules it requires, beforeAll/afterAll hooks) is recorded as run outside
// tests. At the end of each test file one JSON line is appended to $SWE_FORGE_JEST_COVERAGE:
// {"file": "<test file>", "tests": {"<full name>": {"<source>": [lines]}}, "outside": {...}},
// paths relative to the working directory (the repository root), lines of the source files
// (through the transform's source map where there is one). Jest runs in band, so the lines do
// not interleave.
'use strict';
const fs = require('fs');
const path = require('path');

const outFile = process.env.SWE_FORGE_JEST_COVERAGE;
const root = process.cwd();
// The shared counting (coverage_core.js), written beside this file by the coverage run.
const { counters, grown, merge } = require(process.env.SWE_FORGE_COVERAGE_CORE).tracker(
  () => globalThis.__coverage__ || {},
);

let last = {};
let before = null;
const tests = {};
const outside = {};

beforeEach(() => {
  const now = counters();
  merge(outside, grown(last, now));
  before = now;
});

afterEach(() => {
  const now = counters();
  const name = expect.getState().currentTestName;
  const lines = grown(before, now);
  if (name in tests) merge(tests[name], lines); else tests[name] = lines;
  last = now;
});

afterAll(() => {
  if (!outFile) return;
  merge(outside, grown(last, counters()));
  const testPath = expect.getState().testPath || '';
  const rel = path.relative(root, testPath).split(path.sep).join('/');
  fs.appendFileSync(outFile, JSON.stringify({ file: rel, tests, outside }) + '\n');
});

// swe-forge: a harness's verdict on a jest or mocha run. Reads the framework's JSON report
// (argv[2]: jest's `--json`, or mocha's `json` reporter) and prints,
// for every test it holds, `[PASSED] <id>` or `[FAILED] <id>` (ids as swe-forge's records write
// them: `<test file>::<full name>`; SWE-bench's parse_log_jest_json reads these lines), and a
// test file jest could not run as `[FAILED] <file>::<its graded test>` for each graded test of
// that file. The graded ids are the remaining arguments; the exit status is 0 only when every
// one of them passed (a graded test that did not run is a failure).
'use strict';
const fs = require('fs');
const path = require('path');

const [reportPath, ...graded] = process.argv.slice(2);
let report = { testResults: [] };
try {
  report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
} catch (e) {
  console.log(`swe-forge: no jest report (${e.message})`);
}
const root = process.cwd();
const status = new Map();
const rel = (file) => path.relative(root, path.resolve(root, file || '')).split(path.sep).join('/');
// mocha: `tests` (every test), with `failures` and `pending` among them.
if (Array.isArray(report.tests)) {
  const key = (t) => `${rel(t.file)}::${t.fullTitle}`;
  const failed = new Set((report.failures || []).map(key));
  const pending = new Set((report.pending || []).map(key));
  for (const t of report.tests) {
    const id = key(t);
    if (!pending.has(id)) status.set(id, failed.has(id) ? 'FAILED' : 'PASSED');
  }
}
for (const file of report.testResults || []) {
  const f = rel(file.name);
  const cases = file.assertionResults || [];
  if (file.status === 'failed' && cases.length === 0) {
    for (const id of graded) {
      if (id.startsWith(f + '::')) status.set(id, 'FAILED');
    }
    continue;
  }
  for (const c of cases) {
    const name = c.fullName || [...(c.ancestorTitles || []), c.title].join(' ');
    if (c.status === 'passed') status.set(`${f}::${name}`, 'PASSED');
    else if (c.status === 'failed') status.set(`${f}::${name}`, 'FAILED');
  }
}
for (const [id, s] of status) console.log(`[${s}] ${id}`);
const failed = graded.filter((id) => status.get(id) !== 'PASSED');
for (const id of failed) console.error(`swe-forge: not passed: ${id}`);
process.exit(failed.length === 0 ? 0 : 1);

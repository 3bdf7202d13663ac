// swe-forge: a harness's verdict on a jest run. Reads jest's JSON report (argv[2]) and prints,
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
for (const file of report.testResults || []) {
  const rel = path.relative(root, file.name).split(path.sep).join('/');
  const cases = file.assertionResults || [];
  if (file.status === 'failed' && cases.length === 0) {
    for (const id of graded) {
      if (id.startsWith(rel + '::')) status.set(id, 'FAILED');
    }
    continue;
  }
  for (const c of cases) {
    const name = c.fullName || [...(c.ancestorTitles || []), c.title].join(' ');
    if (c.status === 'passed') status.set(`${rel}::${name}`, 'PASSED');
    else if (c.status === 'failed') status.set(`${rel}::${name}`, 'FAILED');
  }
}
for (const [id, s] of status) console.log(`[${s}] ${id}`);
const failed = graded.filter((id) => status.get(id) !== 'PASSED');
for (const id of failed) console.error(`swe-forge: not passed: ${id}`);
process.exit(failed.length === 0 ? 0 : 1);

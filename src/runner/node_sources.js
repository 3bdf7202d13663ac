// swe-forge: the source line each failed jest or mocha test failed at (the first frame of its failure's
// stack that lies in its own test file), for the issue text: `{"<test file>::<full name>":
// "expect(twice(2)).toBe(4);"}` on stdout. argv[2] is jest's JSON report; paths are read
// relative to the working directory (the repository root).
'use strict';
const fs = require('fs');
const path = require('path');

const report = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const root = process.cwd();
const cache = new Map();
function lineOf(file, n) {
  if (!cache.has(file)) {
    try {
      cache.set(file, fs.readFileSync(file, 'utf8').split('\n'));
    } catch (e) {
      cache.set(file, []);
    }
  }
  return (cache.get(file)[n - 1] || '').trim();
}
const out = {};
// The line of the first frame in `abs` (mocha writes frames relative to the working directory).
const lineFor = (abs, stack) => {
  for (const p of [abs, path.relative(root, abs)]) {
    const esc = p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = stack.match(new RegExp('[ (]' + esc + ':(\\d+):\\d+'));
    if (m) return lineOf(abs, Number(m[1]));
  }
  return '';
};
// mocha's json reporter: `failures`, each with its file and error.
for (const t of report.failures || []) {
  if (!t.file || !t.err) continue;
  const abs = path.resolve(root, t.file);
  const line = lineFor(abs, String(t.err.stack || ''));
  if (line) out[`${path.relative(root, abs).split(path.sep).join('/')}::${t.fullTitle}`] = line;
}
for (const file of report.testResults || []) {
  const rel = path.relative(root, file.name).split(path.sep).join('/');
  for (const c of file.assertionResults || []) {
    if (c.status !== 'failed') continue;
    const stack = (c.failureMessages || []).join('\n');
    const esc = file.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = stack.match(new RegExp(esc + ':(\\d+):\\d+'));
    if (!m) continue;
    const line = lineOf(file.name, Number(m[1]));
    if (line) out[`${rel}::${c.fullName}`] = line;
  }
}
process.stdout.write(JSON.stringify(out));

// swe-forge: which of a project's dependencies (package.json) cannot be loaded here, and whether
// its tests can run without them. A package loads when it is in the project's node_modules, in
// swe-forge's install (/opt/swe-forge/node/node_modules) or among Debian's node packages
// (/usr/share/nodejs, /usr/lib/nodejs and the architecture's directory). Versions are not
// compared: Debian ships one version of each package.
//
// Run at the repository root. What is missing and needed is printed on stdout, one name per
// line (what an install should fetch); the verdict and the reasons go to stderr.
//   - `dependencies` are always needed (the code under test loads them);
//   - a devDependency is needed when a test file loads it (require, import) or the test
//     configuration names it (package.json's jest/mocha/babel sections, jest.config.*,
//     .mocharc.*, babel.config.*, .babelrc); a linter, bundler or release tool is not.
// Exit 3 when the tests cannot run: a dependency is missing, the configuration needs a missing
// package, or every test file needs one. A missing package only some test files need is a
// warning (those files are reported by the baseline as uncollectable), exit 0.
'use strict';
const fs = require('fs');
const path = require('path');

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const dirs = [
  path.resolve('node_modules'),
  '/opt/swe-forge/node/node_modules',
  '/usr/share/nodejs',
  '/usr/lib/nodejs',
  ...require('module').globalPaths,
];
const loads = (name) => dirs.some((d) => fs.existsSync(path.join(d, name, 'package.json')));
const runtime = Object.keys(pkg.dependencies || {});
const dev = Object.keys(pkg.devDependencies || {}).filter((n) => !runtime.includes(n));

// The files of the repository (not dependencies, not version control).
function walk(dir, out) {
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    return out;
  }
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const p = dir === '.' ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}
const files = walk('.', []);
const script = /\.(c|m)?(j|t)sx?$/;
const isTest = (f) =>
  script.test(f) &&
  (/(^|\/)(test|tests|__tests__|spec)\//.test(f) ||
    /\.(test|spec)\.[^/]+$/.test(f) ||
    /(^|\/)test-[^/]+$/.test(f));
const isConfig = (f) =>
  /^(jest\.config\.[^/]+|\.mocharc(\.[^/]+)?|babel\.config\.[^/]+|\.babelrc(\.[^/]+)?)$/.test(f);

// The packages a file loads: the package part of each module specifier.
const specifier = /(?:require\s*\(\s*|import\s*\(\s*|\bfrom\s+|\bimport\s+)['"]([^'"\n]+)['"]/g;
function loaded(text) {
  const names = new Set();
  for (const m of text.matchAll(specifier)) {
    const s = m[1];
    if (s.startsWith('.') || s.startsWith('/') || s.startsWith('node:')) continue;
    const parts = s.split('/');
    names.add(s.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
  }
  return names;
}
const read = (f) => {
  try {
    return fs.readFileSync(f, 'utf8');
  } catch (e) {
    return '';
  }
};
const configText = [
  JSON.stringify({ jest: pkg.jest, mocha: pkg.mocha, babel: pkg.babel }),
  ...files.filter(isConfig).map(read),
].join('\n');
const namedInConfig = (name) =>
  configText.includes(`"${name}"`) || configText.includes(`'${name}'`) || configText.includes(`${name}/`);

const missingRuntime = runtime.filter((n) => !loads(n));
const missingDev = dev.filter((n) => !loads(n));
const forConfig = missingDev.filter(namedInConfig);
const testFiles = files.filter(isTest);
const byTests = new Map(); // missing devDependency -> test files that load it
const blocked = new Set();
for (const f of testFiles) {
  for (const name of loaded(read(f))) {
    if (missingDev.includes(name) || missingRuntime.includes(name)) {
      if (!byTests.has(name)) byTests.set(name, []);
      byTests.get(name).push(f);
      blocked.add(f);
    }
  }
}
const needed = [...new Set([...missingRuntime, ...forConfig, ...byTests.keys()])].sort();
const unused = missingDev.filter((n) => !needed.includes(n));
for (const name of needed) console.log(name);

const fatal =
  missingRuntime.length > 0 ||
  forConfig.length > 0 ||
  (testFiles.length > 0 && blocked.size === testFiles.length);
if (unused.length > 0) {
  console.error(
    `swe-forge: not needed by the tests, and not among this machine's node packages: ${unused.join(', ')}`,
  );
}
if (fatal) {
  console.error(`swe-forge: not among this machine's node packages: ${needed.join(', ')}`);
  process.exit(3);
}
for (const [name, users] of byTests) {
  console.error(
    `swe-forge: warning: ${name} is not among this machine's node packages; these test files cannot load: ${users.join(', ')}`,
  );
}
process.exit(0);

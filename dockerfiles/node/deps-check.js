// swe-forge: which of a project's dependencies and devDependencies (package.json) cannot be
// loaded here: not in the project's node_modules, not in swe-forge's install
// (/opt/swe-forge/node/node_modules), not among Debian's node packages (/usr/share/nodejs,
// /usr/lib/nodejs and the architecture's directory). Run at the repository root; prints the
// missing names, one per line (and once more on stderr, in one line), and exits 3 when there
// are any. Versions are not compared:
// Debian ships one version of each package.
'use strict';
const fs = require('fs');
const path = require('path');

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const wanted = Object.keys(Object.assign({}, pkg.dependencies || {}, pkg.devDependencies || {}));
const dirs = [
  path.resolve('node_modules'),
  '/opt/swe-forge/node/node_modules',
  '/usr/share/nodejs',
  '/usr/lib/nodejs',
  ...require('module').globalPaths,
];
const missing = wanted.filter(
  (name) => !dirs.some((d) => fs.existsSync(path.join(d, name, 'package.json'))),
);
for (const name of missing) console.log(name);
if (missing.length > 0) {
  console.error(`swe-forge: not among this machine's node packages: ${missing.join(', ')}`);
}
process.exit(missing.length > 0 ? 3 : 0);

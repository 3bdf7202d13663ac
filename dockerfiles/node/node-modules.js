// swe-forge: the `node_modules` folder the local sandbox puts beside each worktree (argv[2]:
// where to make it), so that what resolves upwards from the repository (jest's presets and
// transforms, TypeScript's packages and types, which ignore NODE_PATH) finds Debian's node
// packages as if installed: one link per package of /usr/share/nodejs, but of its type
// declarations (@types) only node's, the test frameworks' (jest, mocha) and those the project's
// package.json names (`@types/x`, or `x` with an `@types/x`): TypeScript loads every package
// under node_modules/@types, and a host's unrelated ones (`@types/expect.js` redeclares
// `expect`) break the project's type check. A repository image has this as /node_modules.
'use strict';
const fs = require('fs');
const path = require('path');

const debian = '/usr/share/nodejs';
const out = path.resolve(process.argv[2], 'node_modules');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, '@types'), { recursive: true });
for (const name of fs.readdirSync(debian)) {
  if (name !== '@types') fs.symlinkSync(path.join(debian, name), path.join(out, name));
}
let pkg = {};
try {
  pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
} catch (e) {
  // No package.json: the frameworks' types only.
}
const named = Object.keys(Object.assign({}, pkg.dependencies, pkg.devDependencies, pkg.peerDependencies));
const types = new Set(['node', 'jest', 'mocha']);
for (const n of named) {
  if (n.startsWith('@types/')) types.add(n.slice('@types/'.length));
  else types.add(n.startsWith('@') ? n.slice(1).replace('/', '__') : n);
}
for (const t of types) {
  const from = path.join(debian, '@types', t);
  if (fs.existsSync(from)) fs.symlinkSync(from, path.join(out, '@types', t));
}

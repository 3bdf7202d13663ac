// swe-forge: the project's own jest configuration with swe-forge's files appended: the guard
// that makes process.exit() throw ($SWE_FORGE_JEST_EXIT) to its setupFiles, in every run, and
// the per-test coverage file ($SWE_FORGE_JEST_SETUP) to its setupFilesAfterEnv, in the coverage
// run (jest's options on the command line would replace the project's own). The configuration
// is read as jest reads it: jest.config.js, .cjs or .json at the root, else package.json's
// "jest" key; a configuration that exports a function is called. rootDir stays the root.
'use strict';
const fs = require('fs');
const path = require('path');

const root = process.cwd();

function projectConfig() {
  for (const name of ['jest.config.js', 'jest.config.cjs', 'jest.config.json']) {
    const file = path.join(root, name);
    if (fs.existsSync(file)) {
      return require(file);
    }
  }
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    return pkg.jest || {};
  } catch (e) {
    return {};
  }
}

module.exports = async () => {
  let config = projectConfig();
  if (typeof config === 'function') {
    config = await config();
  }
  config = Object.assign({}, config && config.default ? config.default : config);
  const rootDir = config.rootDir ? path.resolve(root, config.rootDir) : root;
  const extra = (list, file) => (file ? [...(list || []), file] : list);
  return Object.assign(config, {
    rootDir,
    setupFiles: extra(config.setupFiles, process.env.SWE_FORGE_JEST_EXIT),
    setupFilesAfterEnv: extra(config.setupFilesAfterEnv, process.env.SWE_FORGE_JEST_SETUP),
  });
};

// swe-forge: the project's own jest configuration with swe-forge's per-test coverage file
// ($SWE_FORGE_JEST_SETUP) appended to its setupFilesAfterEnv, for the coverage run (jest's
// --setupFilesAfterEnv on the command line would replace the project's own). The configuration
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
  return Object.assign(config, {
    rootDir,
    setupFilesAfterEnv: [...(config.setupFilesAfterEnv || []), process.env.SWE_FORGE_JEST_SETUP],
  });
};

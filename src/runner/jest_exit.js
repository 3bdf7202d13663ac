// swe-forge: in every jest run (a setupFiles entry of swe-forge's configuration wrapper), code
// under test that calls process.exit() throws instead of ending jest's process (jest runs in
// band: one exit would end the whole run with no report). The test that made the call fails
// with this error; the other tests run on. A test that mocks process.exit replaces this.
'use strict';
process.exit = function exit(code) {
  throw new Error(`process.exit(${code === undefined ? '' : code}) was called`);
};

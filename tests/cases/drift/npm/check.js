'use strict';
// Fails on the lockfile's top-level ms (2.1.3); debug's own ms must stay the nested 2.0.0.
const path = require('path');
const top = require('ms/package.json').version;
const nested = require(require.resolve('ms/package.json', { paths: [path.dirname(require.resolve('debug'))] })).version;
console.log(`ms ${top}, debug's ms ${nested}`);
if (nested !== '2.0.0') {
  console.error(`error: debug got ms ${nested}, not the nested 2.0.0`);
  process.exit(2);
}
if (top === '2.1.3') {
  console.error('error: ms 2.1.3 is not supported here');
  process.exit(1);
}

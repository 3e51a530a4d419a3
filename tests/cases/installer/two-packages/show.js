// The node it runs on and what the dependency layer installed.
const isNumber = require('is-number');
const ms = require('ms');
console.log(`${process.version} is-number:${isNumber(5)} ms:${ms('2h')}`);

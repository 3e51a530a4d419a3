'use strict';
// Prints the is-number version the installed tree resolves to.
console.log(require('is-number/package.json').version);

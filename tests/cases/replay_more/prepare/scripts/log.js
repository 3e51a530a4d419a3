'use strict';
// Appends the lifecycle event's name to build/lifecycle.txt: which root scripts ran, in which order.
const fs = require('fs');
fs.mkdirSync('build', { recursive: true });
fs.appendFileSync('build/lifecycle.txt', `${process.argv[2]}\n`);

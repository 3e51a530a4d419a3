'use strict';
const fs = require('fs');
process.stdout.write(fs.readFileSync('build/out.txt', 'utf8'));
process.stdout.write(`lifecycle: ${fs.readFileSync('build/lifecycle.txt', 'utf8').trim().split('\n').join(' ')}\n`);

'use strict';
// The root's prepare script: it reads the source, so it can only run once the source is there.
const fs = require('fs');
const message = fs.readFileSync('src/message.txt', 'utf8').trim();
fs.mkdirSync('build', { recursive: true });
fs.writeFileSync('build/out.txt', `generated from src: ${message}\n`);

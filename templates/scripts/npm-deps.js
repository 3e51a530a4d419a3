#!/usr/bin/env node
// Helpers replay runs inside the build (never capsule-provided code):
//   strip-root-scripts PKG   keep the root's lifecycle scripts out of the dependency layer
//   root-prepare PKG         run them once the source is there (npm's `prepare` needs it)
//   pin PINS DRIFT MODE REG  compare installed versions with the recorded ones; MODE=pin
//                            installs the recorded version of every drifted package
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const ROOT_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'];
const SAVED = '/opt/replay/root-scripts.json';

function stripRootScripts(pkgPath) {
  const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8'));
  const scripts = pkg.scripts || {};
  const saved = {};
  for (const name of ROOT_SCRIPTS) {
    if (name in scripts) { saved[name] = scripts[name]; delete scripts[name]; }
  }
  fs.writeFileSync(SAVED, JSON.stringify(saved));
  fs.writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
}

function rootPrepare(pkgPath) {
  if (!fs.existsSync(SAVED) || !fs.existsSync(pkgPath)) return;
  const saved = JSON.parse(fs.readFileSync(SAVED, 'utf8'));
  for (const name of ['install', 'postinstall', 'prepare']) {
    if (saved[name]) {
      console.log(`replay: running the root's ${name} script now that the source is here`);
      execFileSync('npm', ['run', name], { stdio: 'inherit' });
    }
  }
}

function installedVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join('node_modules', name, 'package.json'), 'utf8')).version;
  } catch (e) {
    return null;
  }
}

function pin(pinsPath, driftPath, mode, registry) {
  const pins = JSON.parse(fs.readFileSync(pinsPath, 'utf8'));
  const drift = [];
  for (const [name, recorded] of Object.entries(pins)) {
    const installed = installedVersion(name);
    if (installed !== null && installed !== recorded) drift.push({ name, recorded, installed });
  }
  fs.writeFileSync(driftPath, JSON.stringify({ mode, drift }, null, 2));
  if (mode === 'pin' && drift.length) {
    const specs = drift.map((d) => `${d.name}@${d.recorded}`);
    console.log(`replay: pinning ${drift.length} drifted package(s): ${specs.join(' ')}`);
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', `--registry=${registry}`, ...specs],
      { stdio: 'inherit' });
  }
  console.log(`replay: ${drift.length} package(s) drifted from the capsule's resolved versions`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'strip-root-scripts') stripRootScripts(args[0]);
else if (cmd === 'root-prepare') rootPrepare(args[0]);
else if (cmd === 'pin') pin(args[0], args[1], args[2], args[3]);
else { console.error(`npm-deps.js: unknown command ${cmd}`); process.exit(2); }

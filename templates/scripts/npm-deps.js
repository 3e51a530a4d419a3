#!/usr/bin/env node
// Helpers replay runs inside the build (never capsule-provided code):
//   strip-root-scripts PKG   keep the root's lifecycle scripts out of the dependency layer
//   root-prepare PKG         run them once the source is there (npm's `prepare` needs it)
//   pin PINS DRIFT MODE REG  compare installed versions with the recorded ones; MODE=pin
//                            installs the recorded version of every drifted package (and
//                            without an installed lockfile, every recorded one)
//   yarn-registry LOCK REG   point yarn.lock's public-registry URLs at REG
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
  if (!fs.existsSync(pkgPath)) return;
  // The source's package.json: the recorded diff may change its scripts.
  const scripts = JSON.parse(fs.readFileSync(pkgPath, 'utf8')).scripts || {};
  for (const name of rootRuns(scripts)) {
    console.log(`replay: running the root's ${name} script now that the source is here`);
    try {
      execFileSync('npm', ['run', name], { stdio: 'inherit' });
    } catch (e) {
      fail(`the root's ${name} script failed (${e.status === null ? e.signal : `exit ${e.status}`})`);
    }
  }
}

// The `npm run` calls that run each root lifecycle script once, in `npm ci`'s order.
// `npm run X` runs preX and postX too: so `install` covers preinstall and postinstall,
// and those run alone only without it (--ignore-scripts would skip them, but it also
// leaks into every npm the scripts themselves call).
function rootRuns(scripts) {
  const has = (name) => typeof scripts[name] === 'string';
  const runs = [];
  for (const [pre, main, post] of [['preinstall', 'install', 'postinstall'], [null, 'prepublish', null],
    ['preprepare', 'prepare', 'postprepare']]) {
    if (has(main)) runs.push(main);
    else runs.push(...[pre, post].filter((n) => n && has(n)));
  }
  return runs;
}

function fail(message) {
  // One `replay:` line the build's error names, instead of node's stack trace.
  console.error(`replay: ${message}`);
  process.exit(1);
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
  if (!fs.existsSync(SAVED)) {
    // No lockfile was installed (strip-root-scripts runs before every lockfile install; none
    // recorded, or one replay cannot install): the recorded versions are all there is,
    // whatever the mode. --force: a tree recorded elsewhere may
    // hold another platform's packages and peer ranges a flat install trips over.
    const specs = Object.entries(pins).map(([name, version]) => `${name}@${version}`);
    fs.writeFileSync(driftPath, JSON.stringify({ mode, drift: [] }, null, 2));
    console.log(`replay: no lockfile installed: installing the ${specs.length} recorded package(s)`);
    npmInstall(specs, registry, ['--force', '--no-package-lock']);
    return;
  }
  const drift = [];
  for (const [name, recorded] of Object.entries(pins)) {
    const installed = installedVersion(name);
    if (installed !== null && installed !== recorded) drift.push({ name, recorded, installed });
  }
  fs.writeFileSync(driftPath, JSON.stringify({ mode, drift }, null, 2));
  if (mode === 'pin' && drift.length) {
    const specs = drift.map((d) => `${d.name}@${d.recorded}`);
    console.log(`replay: pinning ${drift.length} drifted package(s): ${specs.join(' ')}`);
    npmInstall(specs, registry, []);
    const left = drift.filter((d) => installedVersion(d.name) !== d.recorded).map((d) => d.name);
    if (left.length) fail(`pinning left ${left.join(', ')} at another version than the capsule's`);
  }
  console.log(`replay: ${drift.length} package(s) drifted from the capsule's resolved versions`);
}

function npmInstall(specs, registry, extra) {
  if (!specs.length) return;
  try {
    // --replace-registry-host=always: as for `npm ci`, the lockfile's own registry (a
    // company one, unreachable here) is never used.
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', `--registry=${registry}`,
      '--replace-registry-host=always', ...extra, ...specs], { stdio: 'inherit' });
  } catch (e) {
    const shown = specs.length > 5 ? `${specs.slice(0, 5).join(' ')} and ${specs.length - 5} more` : specs.join(' ');
    fail(`npm install of the recorded versions failed (${e.status === null ? e.signal : `exit ${e.status}`}): ${shown}`);
  }
}

// yarn 1 fetches each package from the URL its lockfile records, whatever --registry says: the
// public registry's URLs go to the configured one instead (which may be a mirror, or need the
// credentials the .npmrc secret holds for it), as `npm ci --replace-registry-host` does for
// package-lock.json. A lockfile naming another registry keeps it: that is where its packages are.
const PUBLIC_RESOLVED = /^(\s+resolved ")https?:\/\/registry\.(?:yarnpkg\.com|npmjs\.org)(\/[^"]*")/gm;

function yarnRegistry(lockPath, registry) {
  const base = registry.replace(/\/+$/, '');
  const text = fs.readFileSync(lockPath, 'utf8');
  let count = 0;
  const out = text.replace(PUBLIC_RESOLVED, (match, before, rest) => {
    const moved = before + base + rest;
    if (moved !== match) count += 1;
    return moved;
  });
  if (!count) return;
  fs.writeFileSync(lockPath, out);
  console.log(`replay: ${count} package URL(s) of ${lockPath} fetched from ${base} (the configured registry)`);
}

function main([cmd, ...args]) {
  if (cmd === 'strip-root-scripts') stripRootScripts(args[0]);
  else if (cmd === 'root-prepare') rootPrepare(args[0]);
  else if (cmd === 'pin') pin(args[0], args[1], args[2], args[3]);
  else if (cmd === 'yarn-registry') yarnRegistry(args[0], args[1]);
  else { console.error(`npm-deps.js: unknown command ${cmd}`); process.exit(2); }
}

if (require.main === module) main(process.argv.slice(2));
else module.exports = { rootRuns };  // for the unit tests

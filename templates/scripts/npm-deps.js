#!/usr/bin/env node
// Helpers replay runs inside the build (never capsule-provided code):
//   strip-root-scripts PKG   keep the root's lifecycle scripts out of the dependency layer
//   root-prepare PKG         run them once the source is there (npm's `prepare` needs it)
//   pin PINS DRIFT MODE REG [MANAGER [STORE]]
//                            compare installed versions with the recorded ones; MODE=pin
//                            pins every drifted package with MANAGER (npm, pnpm, yarn: the
//                            lockfile's; STORE its store or cache dir), and without an
//                            installed lockfile installs every recorded one with npm
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

// -- pinning the recorded installed versions over an installed lockfile -------------------------
//
// A pin is a version, or the versions a package was recorded at when it was installed several
// times (the top-level copy, what the command's own `require` gets, and copies nested under the
// packages that need another version). The lockfile's tree tells them apart: the recorded version it
// places at no nested path is the top-level one; the nested copies stay where it puts them. Each
// package manager pins with its own means (NODE_PINNING in runner/build/pins.py).

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return null;
  }
}

function versionAt(dir) {
  const pkg = readJson(path.join(dir, 'package.json'));
  return pkg && typeof pkg.version === 'string' ? pkg.version : null;
}

// Package directories directly under a node_modules directory: [name, dir], scoped ones included.
function packageDirs(modules) {
  const out = [];
  let names = [];
  try { names = fs.readdirSync(modules); } catch (e) { return out; }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const dir = path.join(modules, name);
    if (name.startsWith('@')) {
      let inner = [];
      try { inner = fs.readdirSync(dir); } catch (e) { continue; }
      for (const sub of inner) out.push([`${name}/${sub}`, path.join(dir, sub)]);
    } else {
      out.push([name, dir]);
    }
  }
  return out;
}

function isLink(dir) {
  try { return fs.lstatSync(dir).isSymbolicLink(); } catch (e) { return false; }
}

function realOf(dir) {
  try { return fs.realpathSync(dir); } catch (e) { return null; }
}

// The installed copies of the wanted packages: name -> {top, nested: [versions]}. npm and yarn 1 nest
// node_modules directories; pnpm keeps every copy once under node_modules/.pnpm and links to it.
function installedTree(manager, wanted) {
  const tree = new Map();
  const entry = (name) => {
    if (!tree.has(name)) tree.set(name, { top: null, topReal: null, nested: [] });
    return tree.get(name);
  };
  for (const [name, dir] of packageDirs('node_modules')) {
    if (!wanted.has(name)) continue;
    const e = entry(name);
    e.top = versionAt(dir);
    e.topReal = realOf(dir);
  }
  const copy = (name, dir) => {
    if (!wanted.has(name) || isLink(dir)) return;
    const e = entry(name);
    if (realOf(dir) === e.topReal) return;
    const v = versionAt(dir);
    if (v !== null) e.nested.push(v);
  };
  if (manager === 'pnpm') {
    let keys = [];
    try { keys = fs.readdirSync(path.join('node_modules', '.pnpm')); } catch (e) { keys = []; }
    for (const key of keys) {
      for (const [name, dir] of packageDirs(path.join('node_modules', '.pnpm', key, 'node_modules'))) copy(name, dir);
    }
  } else {
    const walk = (modules, depth) => {
      for (const [name, dir] of packageDirs(modules)) {
        if (depth > 0) copy(name, dir);
        if (!isLink(dir)) walk(path.join(dir, 'node_modules'), depth + 1);
      }
    };
    walk('node_modules', 0);
  }
  return tree;
}

// What to do with one recorded package: {ok}, {pin: version, installed}, or {why} it is not applied.
function decide(recorded, found) {
  const { top, nested } = found || { top: null, nested: [] };
  if (!recorded.length) return { why: 'the capsule records no version of it' };
  if (top === null) {
    const have = [...new Set(nested)];
    if (!have.length) return { why: 'the lockfile does not install it' };
    if (have.length === recorded.length && have.every((v) => recorded.includes(v))) return { ok: true };
    if (recorded.length === 1 && nested.length === 1) return { pin: recorded[0], installed: nested[0], nestedOnly: true };
    return { why: `installed only as nested copies (${have.join(', ')}), kept as the lockfile places them` };
  }
  if (recorded.length === 1) return recorded[0] === top ? { ok: true } : { pin: recorded[0], installed: top };
  const topLevel = recorded.filter((v) => !nested.includes(v));
  if (recorded.includes(top) && topLevel.every((v) => v === top)) return { ok: true };
  if (topLevel.length === 1) return { pin: topLevel[0], installed: top };
  return { why: topLevel.length
    ? `recorded at ${recorded.join(', ')}: ${topLevel.join(' and ')} are placed at no nested path, and only one copy is at the top level`
    : `recorded at ${recorded.join(', ')}, all of them nested copies: which one was at the top level is not recorded` };
}

const SECTIONS = [['dependencies', ''], ['devDependencies', '--save-dev'], ['optionalDependencies', '--save-optional']];

function directSection(manifest, name) {
  return SECTIONS.find(([section]) => manifest && manifest[section] && typeof manifest[section][name] === 'string');
}

// How `manager` moves each drifted package to its recorded version; `why` for those it cannot.
function pinPlan(manager, manifest, tree, drift) {
  const out = { direct: [], single: [], unpinned: [] };
  for (const d of drift) {
    const found = tree.get(d.name) || { nested: [] };
    const copies = (found.top === null ? 0 : 1) + found.nested.length;
    if (manager === 'npm' && !d.nestedOnly) out.direct.push(d);
    else if (manager !== 'npm' && directSection(manifest, d.name) && !d.nestedOnly) out.direct.push(d);
    else if (manager !== 'npm' && copies === 1) out.single.push(d);
    else {
      const means = manager === 'pnpm' ? 'pnpm.overrides' : manager === 'yarn' ? "yarn's resolutions" : 'npm install';
      out.unpinned.push({ name: d.name, recorded: d.recorded, why: d.nestedOnly && manager === 'npm'
        ? 'installed only as a nested copy: npm would add a top-level one'
        : `not a direct dependency, and installed ${copies} times: ${means} would move every copy` });
    }
  }
  return out;
}

function pin(pinsPath, driftPath, mode, registry, manager = 'npm', store = '') {
  const pins = JSON.parse(fs.readFileSync(pinsPath, 'utf8'));
  if (!fs.existsSync(SAVED)) {
    // No lockfile was installed (strip-root-scripts runs before every lockfile install; none
    // recorded, or one replay cannot install): the recorded versions are all there is,
    // whatever the mode (the planner gives one version each). --force: a tree recorded elsewhere
    // may hold another platform's packages and peer ranges a flat install trips over.
    const specs = Object.entries(pins).map(([name, v]) => `${name}@${Array.isArray(v) ? v[v.length - 1] : v}`);
    fs.writeFileSync(driftPath, JSON.stringify({ mode, drift: [], unpinned: [] }, null, 2));
    console.log(`replay: no lockfile installed: installing the ${specs.length} recorded package(s)`);
    npmInstall(specs, registry, ['--force', '--no-package-lock']);
    return;
  }
  const recordedOf = (v) => (Array.isArray(v) ? v : [v]);
  const tree = installedTree(manager, new Set(Object.keys(pins)));
  const drift = [];
  const unpinned = [];
  for (const [name, v] of Object.entries(pins)) {
    const got = decide(recordedOf(v), tree.get(name));
    if (got.why) unpinned.push({ name, recorded: recordedOf(v).join(', '), why: got.why });
    else if (got.pin) drift.push({ name, recorded: got.pin, installed: got.installed, nestedOnly: !!got.nestedOnly });
  }
  const manifest = readJson('package.json');
  const plan = pinPlan(manager, manifest, tree, drift);
  if (mode === 'pin') unpinned.push(...plan.unpinned);
  const shown = (list) => list.map(({ name, recorded, installed }) => ({ name, recorded, installed }));
  fs.writeFileSync(driftPath, JSON.stringify({ mode, drift: shown(drift), unpinned }, null, 2));
  for (const u of unpinned) console.log(`replay: not pinned: ${u.name} ${u.recorded}: ${u.why}`);
  if (mode === 'pin' && (plan.direct.length || plan.single.length)) {
    const moved = [...plan.direct, ...plan.single];
    console.log(`replay: pinning ${moved.length} drifted package(s) with ${manager}: ${moved.map((d) => `${d.name}@${d.recorded}`).join(' ')}`);
    if (manager === 'pnpm') pnpmPin(manifest, plan, registry, store);
    else if (manager === 'yarn') yarnPin(manifest, plan, registry, store);
    else npmInstall(plan.direct.map((d) => `${d.name}@${d.recorded}`), registry, []);
    const after = installedTree(manager, new Set(moved.map((d) => d.name)));
    const left = moved.filter((d) => {
      const f = after.get(d.name) || { top: null, nested: [] };
      return d.nestedOnly ? !(f.nested.length === 1 && f.nested[0] === d.recorded) : f.top !== d.recorded;
    }).map((d) => d.name);
    if (left.length) fail(`pinning left ${left.join(', ')} at another version than the capsule's`);
  }
  console.log(`replay: ${drift.length} package(s) drifted from the capsule's resolved versions`);
}

function run(cmd, args, what) {
  try {
    execFileSync(cmd, args, { stdio: 'inherit' });
  } catch (e) {
    fail(`${what} failed (${e.status === null ? e.signal : `exit ${e.status}`})`);
  }
}

// pnpm: a direct dependency with `pnpm add` (its own section, the exact version), a package with one
// copy with pnpm.overrides; both with the install's store and the lockfile's settings, or pnpm
// resolves the whole tree again (or refuses the store).
function pnpmPin(manifest, plan, registry, store) {
  const common = [`--registry=${registry}`, ...pnpmLockSettings('pnpm-lock.yaml')];
  if (store) common.push(`--store-dir=${store}`, '--package-import-method=copy', '--prefer-offline');
  for (const [section, flag] of SECTIONS) {
    const specs = plan.direct.filter((d) => directSection(manifest, d.name)[0] === section).map((d) => `${d.name}@${d.recorded}`);
    if (specs.length) run('pnpm', ['add', '--save-exact', ...(flag ? [flag] : []), ...common, ...specs], `pnpm add ${specs.join(' ')}`);
  }
  if (plan.single.length) {
    const now = readJson('package.json') || {};
    now.pnpm = now.pnpm || {};
    now.pnpm.overrides = { ...(now.pnpm.overrides || {}) };
    for (const d of plan.single) now.pnpm.overrides[d.name] = d.recorded;
    fs.writeFileSync('package.json', JSON.stringify(now, null, 2));
    run('pnpm', ['install', '--no-frozen-lockfile', ...common], 'pnpm install with pnpm.overrides');
  }
}

// The lockfile's own settings (pnpm 9: autoInstallPeers, excludeLinksFromLockfile) as flags.
function pnpmLockSettings(lockPath) {
  let text = '';
  try { text = fs.readFileSync(lockPath, 'utf8'); } catch (e) { return []; }
  const block = /^settings:\n((?: {2}\S.*\n)+)/m.exec(text);
  if (!block) return [];
  const flags = [];
  for (const [, key, value] of block[1].matchAll(/^ {2}(autoInstallPeers|excludeLinksFromLockfile): (true|false)$/gm)) {
    flags.push(`--config.${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}=${value}`);
  }
  return flags;
}

// yarn 1: a direct dependency's range in the manifest set to the recorded version (resolutions never
// move a direct dependency), a package with one copy through resolutions; yarn then resolves only
// what changed and keeps the rest of yarn.lock.
function yarnPin(manifest, plan, registry, store) {
  const now = readJson('package.json') || {};
  for (const d of plan.direct) now[directSection(manifest, d.name)[0]][d.name] = d.recorded;
  if (plan.single.length) {
    now.resolutions = { ...(now.resolutions || {}) };
    for (const d of plan.single) now.resolutions[d.name] = d.recorded;
  }
  fs.writeFileSync('package.json', JSON.stringify(now, null, 2));
  const args = ['install', '--non-interactive', '--ignore-engines', '--registry', registry];
  if (store) args.push('--cache-folder', store, '--prefer-offline');
  run('yarn', args, 'yarn install of the recorded versions');
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
  else if (cmd === 'pin') pin(...args.slice(0, 6));
  else if (cmd === 'yarn-registry') yarnRegistry(args[0], args[1]);
  else { console.error(`npm-deps.js: unknown command ${cmd}`); process.exit(2); }
}

if (require.main === module) main(process.argv.slice(2));
else module.exports = { rootRuns, decide, installedTree, pinPlan, pnpmLockSettings };  // for the unit tests

"""templates/scripts/npm-deps.js, the helper replay runs inside npm builds (needs node here)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "templates" / "scripts" / "npm-deps.js"
NODE = shutil.which("node")
# Skipped only on a developer machine without node; in CI (REPLAY_REQUIRE_ENGINE=1) it must run.
pytestmark = pytest.mark.skipif(NODE is None and os.environ.get("REPLAY_REQUIRE_ENGINE") != "1",
                                reason="node is not installed here")


def _root_runs(scripts: dict[str, str]) -> list[str]:
    code = f"console.log(JSON.stringify(require({json.dumps(str(SCRIPT))}).rootRuns({json.dumps(scripts)})))"
    return json.loads(subprocess.run([NODE or "node", "-e", code], capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("names, runs", [
    # `npm run install` runs preinstall and postinstall itself: each script once.
    (["preinstall", "install", "postinstall"], ["install"]),
    # Without `install`, its pre and post scripts still run, as `npm ci` runs them.
    (["postinstall", "preinstall"], ["preinstall", "postinstall"]),
    (["postprepare", "prepare", "prepublish", "postinstall"], ["postinstall", "prepublish", "prepare"]),
    (["preprepare"], ["preprepare"]),
    (["test", "build", "prestart"], []),
])
def test_each_root_lifecycle_script_runs_once_in_npm_ci_order(names: list[str], runs: list[str]) -> None:
    assert _root_runs({name: f"echo {name}" for name in names}) == runs


def test_a_script_that_is_not_a_string_is_not_run() -> None:
    assert _root_runs({"prepare": {"not": "a command"}, "postinstall": "echo ok"}) == ["postinstall"]  # type: ignore[dict-item]


def test_an_unknown_command_exits_2() -> None:
    proc = subprocess.run([NODE or "node", str(SCRIPT), "bogus"], capture_output=True, text=True)
    assert (proc.returncode, proc.stderr.strip()) == (2, "npm-deps.js: unknown command bogus")


YARN_LOCK = """\
# yarn lockfile v1


left-pad@1.3.0:
  version "1.3.0"
  resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#5b8a3a7765dfe001261dde915589e782f8c94d1e"
  integrity sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQTDeZkmBvMfhBw2Bt4VFwoWKBsIeHYd8WB4VJ9PelOHj+cJA==

"@scope/pkg@^2.0.0":
  version "2.0.1"
  resolved "https://registry.npmjs.org/@scope/pkg/-/pkg-2.0.1.tgz#0123"

private-pkg@1.0.0:
  version "1.0.0"
  resolved "https://npm.company.example/private-pkg/-/private-pkg-1.0.0.tgz#4567"
"""


def _yarn_registry(tmp_path: Path, registry: str, text: str = YARN_LOCK) -> tuple[str, str]:
    lock = tmp_path / "yarn.lock"
    lock.write_text(text)
    proc = subprocess.run([NODE or "node", str(SCRIPT), "yarn-registry", str(lock), registry],
                          capture_output=True, text=True, check=True)
    return lock.read_text(), proc.stdout


def test_yarn_lock_urls_of_the_public_registry_go_to_the_configured_one(tmp_path: Path) -> None:
    text, said = _yarn_registry(tmp_path, "http://172.17.0.1:4873/npm/")
    resolved = [line.split('"')[1] for line in text.splitlines() if line.strip().startswith("resolved ")]
    assert resolved == [
        "http://172.17.0.1:4873/npm/left-pad/-/left-pad-1.3.0.tgz#5b8a3a7765dfe001261dde915589e782f8c94d1e",
        "http://172.17.0.1:4873/npm/@scope/pkg/-/pkg-2.0.1.tgz#0123",
        "https://npm.company.example/private-pkg/-/private-pkg-1.0.0.tgz#4567",  # another registry's: kept
    ]
    assert text.replace("http://172.17.0.1:4873/npm", "https://registry.yarnpkg.com", 1).replace(
        "http://172.17.0.1:4873/npm", "https://registry.npmjs.org") == YARN_LOCK  # nothing else changed
    assert said.strip() == f"replay: 2 package URL(s) of {tmp_path / 'yarn.lock'} fetched from http://172.17.0.1:4873/npm " \
                           "(the configured registry)"


def test_only_the_urls_that_move_are_rewritten(tmp_path: Path) -> None:
    text, said = _yarn_registry(tmp_path, "https://registry.npmjs.org")  # the default: yarnpkg.com's go there too
    assert text == YARN_LOCK.replace("https://registry.yarnpkg.com", "https://registry.npmjs.org")
    assert said.startswith("replay: 1 package URL(s) of ")
    private = YARN_LOCK.split("\n\n\n")[1].split("\n\n")[2]
    assert _yarn_registry(tmp_path, "https://registry.npmjs.org", private) == (private, "")


# -- pin: which recorded version is the top-level one, and how each manager pins it --------------


def _call(fn: str, *args: object, cwd: Path | None = None) -> object:
    code = (f"const m = require({json.dumps(str(SCRIPT))}); const r = m.{fn}(...{json.dumps(list(args))}); "
            "console.log(JSON.stringify(r instanceof Map ? Object.fromEntries(r) : r))")
    proc = subprocess.run([NODE or "node", "-e", code], capture_output=True, text=True, check=True, cwd=cwd)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("recorded, top, nested, decided", [
    (["2.0.0", "2.0.5"], "2.0.0", ["2.0.0"], {"pin": "2.0.5", "installed": "2.0.0"}),  # the destr
    (["2.0.0", "2.1.3"], "2.1.3", ["2.0.0"], {"ok": True}),  # as the lockfile places them
    (["2.1.3"], "2.1.3", ["2.0.0"], {"ok": True}),
    (["2.1.2"], "2.1.3", [], {"pin": "2.1.2", "installed": "2.1.3"}),
    (["1.0.0", "2.0.0", "3.0.0"], "2.0.0", [], None),  # two versions placed nowhere: one top level
    (["1.0.0", "2.0.0"], "3.0.0", ["1.0.0", "2.0.0"], None),  # all nested: which was on top is not recorded
    (["1.0.0"], None, [], None),  # the lockfile does not install it
    (["1.0.1"], None, ["1.0.0"], {"pin": "1.0.1", "installed": "1.0.0", "nestedOnly": True}),
    (["1.0.0", "1.0.1"], None, ["1.0.0", "1.0.1"], {"ok": True}),
])
def test_decide_pins_the_version_the_lockfile_places_at_no_nested_path(
        recorded: list[str], top: str | None, nested: list[str], decided: dict[str, object] | None) -> None:
    got = _call("decide", recorded, {"top": top, "nested": nested})
    if decided is None:
        assert isinstance(got, dict) and set(got) == {"why"} and got["why"]
    else:
        assert got == decided


def _package(root: Path, rel: str, version: str) -> None:
    (root / rel).mkdir(parents=True)
    (root / rel / "package.json").write_text(json.dumps({"name": rel.rpartition("node_modules/")[2], "version": version}))


def test_the_installed_tree_of_npm_and_of_pnpm(tmp_path: Path) -> None:
    npm = tmp_path / "npm"
    _package(npm, "node_modules/ms", "2.1.3")
    _package(npm, "node_modules/debug", "2.6.9")
    _package(npm, "node_modules/debug/node_modules/ms", "2.0.0")
    _package(npm, "node_modules/@s/x/node_modules/ms", "1.0.0")  # under a scoped package
    code = (f"const m = require({json.dumps(str(SCRIPT))}); "
            "console.log(JSON.stringify(Object.fromEntries([...m.installedTree(process.argv[1], new Set(['ms', 'debug']))]"
            ".map(([k, v]) => [k, [v.top, v.nested.sort()]]))))")
    seen = subprocess.run([NODE or "node", "-e", code, "npm"], capture_output=True, text=True, check=True, cwd=npm)
    assert json.loads(seen.stdout) == {"ms": ["2.1.3", ["1.0.0", "2.0.0"]], "debug": ["2.6.9", []]}
    pnpm = tmp_path / "pnpm"
    _package(pnpm, "node_modules/.pnpm/ms@2.1.3/node_modules/ms", "2.1.3")
    _package(pnpm, "node_modules/.pnpm/ms@2.0.0/node_modules/ms", "2.0.0")
    _package(pnpm, "node_modules/.pnpm/debug@2.6.9/node_modules/debug", "2.6.9")
    (pnpm / "node_modules/.pnpm/debug@2.6.9/node_modules/ms").symlink_to("../../ms@2.0.0/node_modules/ms")
    (pnpm / "node_modules/ms").symlink_to(".pnpm/ms@2.1.3/node_modules/ms")
    seen = subprocess.run([NODE or "node", "-e", code, "pnpm"], capture_output=True, text=True, check=True, cwd=pnpm)
    assert json.loads(seen.stdout) == {"ms": ["2.1.3", ["2.0.0"]], "debug": [None, ["2.6.9"]]}


def test_each_manager_pins_what_it_can_and_names_the_rest() -> None:
    manifest = {"dependencies": {"ms": "2.1.3"}, "devDependencies": {"jest": "29"}}
    tree = {"ms": {"top": "2.1.3", "nested": ["2.0.0"]}, "one": {"top": "1.0.0", "nested": []},
            "many": {"top": "1.0.0", "nested": ["0.9.0"]}}
    drift = [{"name": n, "recorded": "9.9.9", "installed": "x"} for n in ("ms", "one", "many")]
    code = (f"const m = require({json.dumps(str(SCRIPT))}); const p = m.pinPlan(process.argv[1], "
            f"{json.dumps(manifest)}, new Map(Object.entries({json.dumps(tree)})), {json.dumps(drift)}); "
            "console.log(JSON.stringify({direct: p.direct.map((d) => d.name), single: p.single.map((d) => d.name), "
            "unpinned: p.unpinned.map((d) => d.name + ': ' + d.why)}))")
    plans = {m: json.loads(subprocess.run([NODE or "node", "-e", code, m], capture_output=True, text=True,
                                          check=True).stdout) for m in ("npm", "pnpm", "yarn")}
    assert plans["npm"] == {"direct": ["ms", "one", "many"], "single": [], "unpinned": []}
    assert plans["pnpm"] == {"direct": ["ms"], "single": ["one"], "unpinned": [
        "many: not a direct dependency, and installed 2 times: pnpm.overrides would move every copy"]}
    assert plans["yarn"]["direct"] == ["ms"] and plans["yarn"]["single"] == ["one"]
    assert "yarn's resolutions would move every copy" in plans["yarn"]["unpinned"][0]


def test_the_pnpm_lockfiles_settings_become_flags(tmp_path: Path) -> None:
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: false\n"
                                             "  excludeLinksFromLockfile: true\n\nimporters:\n")
    assert _call("pnpmLockSettings", "pnpm-lock.yaml", cwd=tmp_path) == [
        "--config.auto-install-peers=false", "--config.exclude-links-from-lockfile=true"]

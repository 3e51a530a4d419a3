"""templates/scripts/npm-deps.js, the helper replay runs inside npm builds (needs node here)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "templates" / "scripts" / "npm-deps.js"
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

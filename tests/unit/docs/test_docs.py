"""The docs: a short README with the two set-up commands, a site that builds strictly, every
command, option and setting on a page, and the generated parts current."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from runner import settingsref
from runner.cli.main import load
from runner.cli.topics import TOPICS
from tests.examples import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"

# the page each command's help is on (a group's sub-commands are on the group's page)
PAGES = {"run": "run.md", "inspect": "inspect.md", "diff": "diff.md", "verify": "verify.md",
         "signature": "signature.md", "render": "render.md", "shell": "shell.md", "bisect": "bisect.md",
         "doctor": "doctor.md", "gc": "gc.md", "farm": "farm.md", "worker": "worker.md", "capture": "capture.md",
         "mcp": "mcp.md", "help": "help.md", "version": "help.md", "ci": "runner-image.md"}


def test_the_readme_is_short_and_keeps_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 12 * 1024
    setup = text.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    block = setup.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["scripts/demo", "scripts/test"]
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()
    # the tour, the exit codes (with capture's exception) and the links into docs/
    for part in ("a colleague sent me a capsule", "record a capsule", "a nightly farm", "## exit codes"):
        assert part in text.lower()
    assert "replay capture -o capsule.json -- npm test" in text
    assert "`replay capture` exits with its command's own code" in text
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), link


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """No broken link or anchor, no page left out of the nav, nothing fetched."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "json-reference.html").is_file()


def test_the_generated_parts_are_current() -> None:
    """docs/json-reference.md (the shipped schemas), the settings table, the help topics, the home page."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "docs_gen.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_json_reference_lists_every_shipped_schema() -> None:
    page = (DOCS / "json-reference.md").read_text(encoding="utf-8")
    for path in (ROOT / "runner" / "schemas").glob("*.schema.json"):
        assert f"`{path.name}`" in page


def _commands(command: Any, path: str = "") -> list[tuple[str, Any]]:
    found = [(path, command)] if path else []
    for name, sub in (getattr(command, "commands", None) or {}).items():
        found += _commands(sub, f"{path} {name}".strip())
    return found


COMMANDS = _commands(typer.main.get_command(load()))  # every command module registered


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_command_and_option_is_on_a_page(path: str, command: Any) -> None:
    page_name = PAGES.get(path.split()[0])
    assert page_name, f"replay {path}: no docs page (add it to PAGES and docs/)"
    page = (DOCS / page_name).read_text(encoding="utf-8")
    assert f"replay {path}" in page, f"docs/{page_name} does not name `replay {path}`"
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "hidden", False):
            continue
        names = [o for o in param.opts if o.startswith("--")] or list(param.opts)
        assert any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", page) for n in names), \
            f"replay {path} {names[0]}: not on docs/{page_name}"


def _read_in_runner() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "runner").rglob("*.py"):
        names |= set(re.findall(r"\bREPLAY_[A-Z][A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    return names - {"REPLAY_X"}  # doctor's docstring placeholder


def test_every_setting_read_in_runner_is_in_the_table_and_on_the_settings_page() -> None:
    read = _read_in_runner()
    assert {"REPLAY_CACHE", "REPLAY_BUILD_TIMEOUT", "REPLAY_BROKER"} <= read
    assert read <= settingsref.names(), f"not in runner/settingsref.py: {sorted(read - settingsref.names())}"
    page = (DOCS / "settings.md").read_text(encoding="utf-8")
    for name in settingsref.names():
        assert f"`{name}`" in page


def test_doctor_lists_every_setting_of_the_table(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.main import main

    monkeypatch.setenv("DOCKER_HOST", "unix:///nowhere.sock")
    for variable in ("REPLAY_NPM_REGISTRY", "REPLAY_PYPI_INDEX", "REPLAY_NODE_DIST", "REPLAY_DEBIAN_MIRROR"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")  # refused at once: no network needed
    monkeypatch.setenv("REPLAY_BROKER", "redis://:hunter2@queue.example:6379/0")
    monkeypatch.setenv("REPLAY_SALT", "pepper-4711")
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["doctor"]) == 3
    out = capsys.readouterr().out
    listed = set(re.findall(r"^\s+((?:REPLAY_|DOCKER_)[A-Z_]+)\s", out, re.MULTILINE))
    wanted = {s.variable for s in settingsref.SETTINGS if s.scope != "container"}
    assert listed == wanted
    assert "hunter2" not in out and "pepper-4711" not in out  # a password or a salt is never shown
    assert "redis://queue.example:6379/0" in out


def test_the_help_page_shows_every_topic() -> None:
    page = (DOCS / "help.md").read_text(encoding="utf-8")
    for name in TOPICS:
        assert f"replay help {name}" in page

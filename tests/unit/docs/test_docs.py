"""The docs: a short README with the two set-up commands, a site that builds strictly, every
command, option and setting on a page, and the generated parts current."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from runner import config
from runner.commands.topics import TOPICS
from runner.commands.catalog import COMMANDS
from runner.commands.spec import Command
from tests.examples import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from docs_gen import page_of  # noqa: E402

DOCS = ROOT / "docs"
README = ROOT / "README.md"

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


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_its_generated_options_on_its_page(cmd: Command) -> None:
    """The table itself is generated from the declaration (test_the_generated_parts_are_current)."""
    page = (DOCS / page_of(cmd)).read_text(encoding="utf-8")
    assert f"<!-- options:{cmd.name}:start -->" in page
    assert f"replay {cmd.name}" in page


def _read_in_runner() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "runner").rglob("*.py"):
        names |= set(re.findall(r"\bREPLAY_[A-Z][A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    return names - {"REPLAY_X"}  # doctor's docstring placeholder


def test_every_setting_read_in_runner_is_in_the_table_and_on_the_settings_page() -> None:
    read = _read_in_runner()
    assert {"REPLAY_CACHE", "REPLAY_BUILD_TIMEOUT", "REPLAY_BROKER"} <= read
    assert read <= config.names(), f"not in runner/config.py: {sorted(read - config.names())}"
    page = (DOCS / "settings.md").read_text(encoding="utf-8")
    for name in config.names():
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
    wanted = {s.variable for s in config.SETTINGS if s.scope != "container"}
    assert listed == wanted
    assert "hunter2" not in out and "pepper-4711" not in out  # a password or a salt is never shown
    assert "redis://queue.example:6379/0" in out


def test_the_help_page_shows_every_topic() -> None:
    page = (DOCS / "help.md").read_text(encoding="utf-8")
    for name in TOPICS:
        assert f"replay help {name}" in page


# -- the site as a reader meets it (issue 31) --------------------------------------------------

def _front_matter(page: str) -> dict:  # type: ignore[type-arg]
    import yaml

    text = (DOCS / page).read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{page}: no front matter"
    return yaml.safe_load(text.split("---\n", 2)[1])  # type: ignore[no-any-return]


def test_the_command_pages_are_boosted_in_search_and_the_json_schemas_are_not() -> None:
    from docs_gen import page_of

    reference = _front_matter("json-reference.md")["search"]["boost"]
    for page in {page_of(cmd) for cmd in COMMANDS}:
        assert _front_matter(page)["search"]["boost"] > 1 > reference, page


def test_the_site_has_install_and_quickstart_first_copy_buttons_and_its_stylesheet() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert "content.code.copy" in config["theme"]["features"]
    css = (DOCS / config["extra_css"][0]).read_text(encoding="utf-8")
    assert "pre-wrap" in css and "td:first-child" in css and "nowrap" in css
    first = config["nav"][1]["Getting started"][:2]
    assert first == [{"Install": "install.md"}, {"Quickstart": "quickstart.md"}]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(out)})
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def search(site: Path, query: str) -> list[str]:
    """The pages the site's search box lists for QUERY, best first: the search worker the theme
    ships, run by Node on the built search_index.json (tests/unit/docs/material_search.js)."""
    import json
    import shutil

    from tests.services import missing

    node = shutil.which("node")
    if node is None:
        missing("the docs' search is checked with the theme's own search worker: needs Node (apt-get install nodejs)")
    done = subprocess.run([node, str(Path(__file__).with_name("material_search.js")), str(site), query],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_search_for_an_option_lists_its_command_page_before_the_json_schemas(site: Path) -> None:
    pages = search(site, "include-env")
    assert "capture.html" in pages and "json-reference.html" in pages, pages
    assert pages.index("capture.html") < pages.index("json-reference.html"), pages
    assert search(site, "EnvFact")[0] == "json-reference.html"  # still found where only it has the word


def test_code_blocks_get_a_copy_button_and_the_stylesheet(site: Path) -> None:
    page = (site / "quickstart.html").read_text(encoding="utf-8")
    assert '"content.code.copy"' in page and "stylesheets/extra.css" in page
    assert (site / "stylesheets" / "extra.css").is_file()

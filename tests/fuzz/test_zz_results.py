"""RESULTS.md is what this run of the fuzz tests produced (runs last: the file name sorts last)."""
from __future__ import annotations

import os

import pytest

from tests.fuzz.conftest import PROFILE
from tests.fuzz.tally import RESULTS, TALLY, render

README = RESULTS.parents[2] / "docs" / "security.md"  # the docs page that shows the table
START, END = "<!-- fuzz-results:start -->", "<!-- fuzz-results:end -->"


def table(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.startswith("|")) + "\n"


def readme_block(text: str) -> str:
    return text[text.index(START) + len(START):text.index(END)].strip("\n") + "\n"


def test_results_file_matches_this_run() -> None:
    ran = {key for key in TALLY.finished}
    if not ran or {k for k in TALLY.cases} - ran:
        if os.environ.get("CI") or os.environ.get("REPLAY_REQUIRE_ENGINE") == "1":
            pytest.fail("the fuzz tests did not all run in this session; run the whole tests/fuzz directory")
        pytest.skip("run the whole tests/fuzz directory to compare RESULTS.md")
    fresh = render(TALLY)
    if PROFILE != "ci":
        RESULTS.with_name(f"RESULTS-{PROFILE}.md").write_text(fresh, encoding="utf-8")
        return
    if os.environ.get("REPLAY_FUZZ_WRITE") == "1":
        RESULTS.write_text(fresh, encoding="utf-8")
        readme = README.read_text(encoding="utf-8")
        README.write_text(readme.replace(readme_block(readme), table(fresh)), encoding="utf-8")
    assert {fmt for fmt, _, _ in TALLY.cases} == {"twin", "codeinstances", "novafabric"}
    assert RESULTS.read_text(encoding="utf-8") == fresh, "RESULTS.md is stale: regenerate with REPLAY_FUZZ_WRITE=1"
    # the security page shows the same table
    assert readme_block(README.read_text(encoding="utf-8")) == table(fresh), \
        "docs/security.md's fuzz table is stale: regenerate with REPLAY_FUZZ_WRITE=1"

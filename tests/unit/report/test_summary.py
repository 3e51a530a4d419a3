"""The CI job's Markdown summary (templates/ci/summary.md.j2 through the one environment):
capsule values never break out of their cells, and the table is cut at ROWS."""
from __future__ import annotations

import re

import pytest

from runner.build.plan import Fidelity
from runner.report.summary import ROWS, summary_markdown


def test_hostile_values_stay_in_their_cells_and_long_tables_are_cut() -> None:
    rows = (Fidelity("env A", "set (value not recorded)", "unset", "not applied"),
            *(Fidelity(f"fact`{i}|x", "a\nb | c", "", "approximated", "why") for i in range(ROWS + 3)),
            Fidelity("repo commit", "a" * 40, "a" * 40, "exact"))
    text = summary_markdown("cap|sule.json", [{"verdict": "reproduced", "reason": "it came back.",
                                               "signature": "exit1:0aee0834ac9c4d2d"}], "", rows)
    lines = text.splitlines()
    assert lines[0] == "### replay: `cap|sule.json`"  # a code span: nothing in it is markup
    assert "**REPRODUCED**: `it came back`. Signature `exit1:0aee0834ac9c4d2d`." in lines  # the reason may quote the capsule
    assert "1 of 55 recorded facts replayed exactly." in lines
    assert "1 variable(s) recorded by name only, left unset: `A`." in lines
    table = [line for line in lines if line.startswith("| ``fact")]
    assert len(table) == ROWS and all(line.count("|") - line.count("\\|") == 6 for line in table)
    assert table[0] == "| ``fact`0\\|x`` | `a\\x0ab \\| c` | - | approximated | `why` |"  # GFM reads \\| in code as |
    assert lines[-1] == "… and 3 more (replay --all lists them)." and text.endswith(".\n")


def test_no_result_is_not_judged() -> None:
    text = summary_markdown("c.json", [], "engine `down`\nretry", ())
    assert "**NOT JUDGED**: ``engine `down`\\x0aretry``." in text.splitlines()


@pytest.mark.usefixtures("offline_registry")
def test_the_summary_counts_the_facts_as_the_replay_did() -> None:
    """'12 of 15 recorded facts' in the CI summary where replay said '13 of 17' (issue 31): both read
    the one fidelity table (replay/world.replay_fidelity)."""
    from runner.build.plan import PlanOptions
    from runner.ci.step_summary import fidelity
    from runner.engine import RunResult, RunSpec
    from runner.replay import Progress, ReplayOptions, replay_capsule
    from tests.examples import BUNDLE, TZ_CAPSULE
    from tests.unit.fake_engine import FakeEngine

    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe: bookworm's glibc
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        return RunResult(0, b"ok\n", b"ok\n", 0.1)

    report = replay_capsule(TZ_CAPSULE, ReplayOptions(attempts=1, plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                            engine=FakeEngine(run=run, images=["replay-base/debian:bookworm"]))
    summary = fidelity(TZ_CAPSULE, str(BUNDLE))
    assert [(f.fact, f.status) for f in summary] == [(f.fact, f.status) for f in report.fidelity]


MARKUP = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[Click here](https://evil.example)",
          "![x](https://evil.example/p.png)", "\x1b[0Ksection_start:1:fake\r\x1b[0K")


def _outside_code(markdown: str) -> str:
    """The Markdown with every code span and fenced block taken out: what GitHub reads as markup."""
    return re.sub(r"(`+)(.+?)\1", "", markdown)


def test_a_broken_capsules_reason_and_name_only_envs_are_never_markup() -> None:
    remote = "https://git.example.org/<script>alert(1)</script><img src=x>[Click here](https://evil.example)"
    rows = tuple(Fidelity(f"env {name}", "set (value not recorded)", "unset", "not applied") for name in MARKUP)
    text = summary_markdown("c.json", [{"verdict": "broken", "reason": f"the capsule's remote {remote} is gone"}],
                            "", rows)
    assert "<script>" in text  # said, as code
    outside = _outside_code(text)
    for token in ("<", "](", "![", "\x1b", "\r", "section_start"):
        assert token not in outside, (token, outside)
    assert "\\x1b[0Ksection_start" in text  # the marker shown, not acted on by a GitLab log


def test_no_result_error_is_never_markup() -> None:
    text = summary_markdown("c.json", [], "engine said <img src=x> [x](y)", ())
    assert "<img" not in _outside_code(text) and "](" not in _outside_code(text)

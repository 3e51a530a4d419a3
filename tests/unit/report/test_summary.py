"""The CI job's Markdown summary (templates/ci/summary.md.j2 through the one environment):
capsule values never break out of their cells, and the table is cut at ROWS."""
from __future__ import annotations

from runner.build.plan import Fidelity
from runner.report.summary import ROWS, summary_markdown


def test_hostile_values_stay_in_their_cells_and_long_tables_are_cut() -> None:
    rows = (Fidelity("env A", "set (value not recorded)", "unset", "not applied"),
            *(Fidelity(f"fact`{i}|x", "a\nb | c", "", "approximated", "why") for i in range(ROWS + 3)),
            Fidelity("repo commit", "a" * 40, "a" * 40, "exact"))
    text = summary_markdown("cap|sule.json", [{"verdict": "reproduced", "reason": "it came back.",
                                               "signature": "exit1:0aee0834ac9c4d2d"}], "", rows)
    lines = text.splitlines()
    assert lines[0] == "### replay: `cap/sule.json`"
    assert "**REPRODUCED**: it came back. Signature `exit1:0aee0834ac9c4d2d`." in lines
    assert "1 of 55 recorded facts replayed exactly." in lines
    assert "1 variable(s) recorded by name only, left unset: A." in lines
    table = [line for line in lines if line.startswith("| `fact")]
    assert len(table) == ROWS and all(line.count("|") == 6 for line in table)
    assert table[0] == "| `fact'0/x` | `a b / c` | - | approximated | `why` |"
    assert lines[-1] == "… and 3 more (replay --all lists them)." and text.endswith(".\n")


def test_no_result_is_not_judged() -> None:
    text = summary_markdown("c.json", [], "engine `down`\nretry", ())
    assert "**NOT JUDGED**: engine 'down' retry." in text.splitlines()

"""runner/verdict/vocabulary.py: one vocabulary (owned by runner.verdict.judge), one table of per-verdict facts."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from runner.verdict import judge as outcome
from runner.verdict import vocabulary as verdicts
from runner.farm import records
from runner.report import junit

ROOT = Path(__file__).resolve().parents[3]


def test_the_vocabulary_is_outcomes_not_a_copy() -> None:
    assert verdicts.Verdict is outcome.Verdict and verdicts.VERDICTS is outcome.VERDICTS
    assert verdicts.REPRODUCES is outcome.REPRODUCES == {"reproduced", "flaky"}
    assert verdicts.Classification is outcome.Classification
    assert set(verdicts.FARM_VERDICTS) == set(outcome.VERDICTS) | {"broken", "infra-error"}
    assert get_args(verdicts.FarmVerdict) == (verdicts.Verdict, verdicts.Unjudged)  # a union of the two
    assert records.FarmVerdict is verdicts.FarmVerdict


def test_one_fact_row_per_state_read_by_the_writers() -> None:
    assert sorted(verdicts.FACTS) == sorted(verdicts.FARM_VERDICTS)
    assert verdicts.FACTS["fixed"].icon == "✅" and verdicts.FACTS["reproduced"].junit == "failure"
    assert {v for v, f in verdicts.FACTS.items() if f.trouble} == {"broken", "infra-error"}
    assert dict(junit.OUTCOME) == {v: f.junit for v, f in verdicts.FACTS.items()}
    assert verdicts.facts_of("something-newer") is verdicts.UNKNOWN


def test_reproducing_and_the_farms_states_are_spelled_once() -> None:
    """No module of the farm re-spells the vocabulary as a Literal or a tuple of its own."""
    for path in (ROOT / "runner" / "farm").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal":
                words = {e.value for e in ast.walk(node.slice) if isinstance(e, ast.Constant)}
                assert not words & {"reproduced", "newly-reproducing"}, (path.name, words)
        assert "_REPRODUCING" not in path.read_text(), path.name

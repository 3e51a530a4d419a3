"""An undecided bisect's next command: spelled from bisect's declaration, parsed as printed, and
never printing a value that may be a secret (--env, --salt, a --repo URL's credentials)."""
from __future__ import annotations

import shlex

from runner.bisect.walk import Walk
from runner.commands.catalog import BISECT
from runner.commands.spelled import next_step


def _walk(more: int | None) -> Walk:
    return Walk("undecided", "g" * 40, ("a" * 40,), None, None, (), more_runs=more, spent=12)


def _values(**given: object) -> dict[str, object]:
    values: dict[str, object] = {p.name: p.default for p in BISECT.params}
    values.update(bad="bad.json", good="good.json", commits=True, **given)
    return values


def test_a_decided_walk_has_no_next_step() -> None:
    assert next_step(_values(), BISECT, _walk(None)) is None


def test_the_next_step_asks_for_the_runs_it_likely_needs_and_resumes() -> None:
    then = next_step(_values(), BISECT, _walk(7))
    assert then is not None
    assert then["argv"][:4] == ["replay", "bisect", "bad.json", "--good"]
    assert then["argv"][-3:] == ["--max-runs", "19", "--resume"]
    assert shlex.split(then["command"]) == then["argv"]


def test_secrets_and_url_credentials_are_never_printed() -> None:
    then = next_step(_values(env=["TOKEN=s3cr3t-value"], repo="https://user:ghp_abcdefghijklmnop@git.example/o/r.git"),
                     BISECT, _walk(5))
    assert then is not None
    assert "s3cr3t-value" not in then["command"] and "ghp_abcdefghijklmnop" not in then["command"]
    assert "ghp_abcdefghijklmnop" not in " ".join(then["argv"])
    assert "with the same --env and --repo values" in then["command"]

"""One vocabulary of fact keys: what `diff` lists as differing is exactly what `bisect`
varies or lists as not varied, under the same key (a property over capsule pairs)."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.facts import factkeys
from runner.bisect import variation
from runner.bisect.env import at_bad_commit, not_varied
from runner.capsules import read_capsule
from runner.config import Settings
from runner.facts.diff import diff_capsules
from runner.build.planner import make_plan

from tests.examples import TZ_CAPSULE

BASE = json.loads(TZ_CAPSULE.read_text())

# One change each, as a recorder on another machine would have written it.
CHANGES: dict[str, Any] = {
    "tz": lambda d: (d["env"].update(TZ={"state": "set", "value": "UTC"}), d["locale"].update(timeZone="UTC")),
    "tz-locale-only": lambda d: (d["env"].pop("TZ"), d["locale"].update(timeZone="Asia/Kolkata")),
    "lang": lambda d: d["env"].update(LANG={"state": "set", "value": "de_DE.UTF-8"}),
    "ci": lambda d: d["env"].update(CI={"state": "set", "value": "true"}),
    "node": lambda d: d["runtimes"].update(node="20.20.2"),
    "npm": lambda d: (d["tools"].update(npm="11.6.2"), d["packageManagers"][0].update(version="11.6.2")),
    "lockfile": lambda d: d["packageManagers"][0].update(lockfileSha256="ab" * 32),
    "dependency": lambda d: d["resolved"]["node"].update({"left-pad": ["1.3.0"]}),
    "diff": lambda d: d["repo"].update(dirty=True, diff="diff --git a/x b/x\n"),
    "argv": lambda d: d["command"].update(argv=["npm", "run", "other"]),
    "distro": lambda d: d["os"].update(distroVersion="11", libcVersion="2.31"),
    "kernel": lambda d: d["os"].update(release="5.10.0"),
}


def capsule(tmp: Path, name: str, changes: list[str], passed: bool) -> Any:
    data = copy.deepcopy(BASE)
    for change in changes:
        CHANGES[change](data)
    if passed:
        data["command"].update(exitCode=0, outcome="pass", failure=None)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return read_capsule(path)


@pytest.mark.usefixtures("offline_registry")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(sorted(CHANGES)), unique=True, max_size=6))
def test_diff_keys_are_what_bisect_varies_or_says_it_does_not(tmp_path: Path, changes: list[str]) -> None:
    good, bad = capsule(tmp_path, "good", changes, passed=True), capsule(tmp_path, "bad", [], passed=False)
    s = Settings()
    good_plan, bad_plan = make_plan(good, s), make_plan(bad, s)
    candidates = {f.key for f in variation.differences(at_bad_commit(good_plan, bad_plan), bad_plan)}
    unvaried = not_varied(good, bad, good_plan, bad_plan, candidates)
    d = diff_capsules(good, bad)
    differing = {f.key for f in d.differences}
    # facts only one side records: diff cannot compare them, bisect may still apply them
    lone = {n.key for n in d.not_comparable}
    listed = {n.key for n in unvaried}

    assert differing <= candidates | listed
    assert not candidates & listed
    # every key bisect varies is one diff reports, or one a reported fact is varied as
    varied_as = {n.reason.removeprefix("varied as ") for n in unvaried if n.reason.startswith("varied as ")}
    for key in candidates - differing - varied_as:
        assert any(key == f or key.startswith(f + ":") for f in lone), key
    for key in differing | candidates | listed:
        factkeys.group_of(key)  # every key is in the one vocabulary

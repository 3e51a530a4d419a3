"""inspect.sections: what a capsule records, group by group."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from runner.capsules import read_capsule
from runner.capsules.model import (
    Capsule,
    Command,
    EnvFact,
    Format,
    FrozenMap,
    Provenance,
    Redaction,
    Repo,
    Resolved,
    Worker,
)
from runner.facts.inspect import NONE_RECORDED, NOT_RECORDED, Row, Section, printable, records, sections

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"
TITLES = [
    "Command", "Outcome", "Platform", "Runtimes", "Tools", "Package managers", "Resolved packages", "Repository",
    "Environment", "Locale", "Redaction", "HTTP calls", "Clock and random values", "Inputs / expected outputs",
    "Replay policy", "Provenance",
]  # fmt: skip


def by_title(c: Capsule, **kw: object) -> dict[str, Section]:
    return {s.title: s for s in sections(c, **kw)}  # type: ignore[arg-type]


def values(section: Section) -> dict[str, str]:
    return {r.label: r.value for r in section.rows}


def bare(fmt: Format = Format.TWIN, **changes: object) -> Capsule:
    c = Capsule(Provenance(fmt, "1", "x"), Command(("make", "test"), ".", exit_code=2, outcome="fail"))
    return dataclasses.replace(c, **changes)  # type: ignore[arg-type]


def test_every_group_in_order_and_empty_ones_say_why() -> None:
    got = sections(bare())
    assert [s.title for s in got] == TITLES
    s = {x.title: x for x in got}
    assert s["HTTP calls"].empty == NOT_RECORDED and s["HTTP calls"].rows == ()
    assert s["Runtimes"].empty == NONE_RECORDED  # twin records runtimes; this one found none
    assert values(s["Command"]) == {"argv": "make test", "cwd": "."}
    assert values(s["Outcome"]) == {"outcome": "fail", "exit code": "2"}
    ci = by_title(bare(Format.CODEINSTANCES))
    assert ci["HTTP calls"].empty == NONE_RECORDED and ci["Platform"].empty == NOT_RECORDED


def test_environment_rows_show_value_hash_or_why_not() -> None:
    env = FrozenMap({
        "TZ": EnvFact("TZ", "set", "UTC"),
        "SECRETISH": EnvFact("SECRETISH", "set", hash="ab" * 16),
        "PATH": EnvFact("PATH", "set", host_specific=True),
        "CI": EnvFact("CI", "empty"),
        "NODE_ENV": EnvFact("NODE_ENV", "absent"),
    })  # fmt: skip
    rows = by_title(bare(env=env))["Environment"].rows
    assert rows == (
        Row("TZ", "UTC"),
        Row("SECRETISH", "hash:" + "ab" * 16),
        Row("PATH", "(value not recorded)", "host-specific"),
        Row("CI", "(empty)"),
        Row("NODE_ENV", "(absent)"),
    )


def test_resolved_packages_are_counted_and_cut_unless_all() -> None:
    node = FrozenMap({f"pkg{i:02d}": ("1.0.0",) for i in range(30)} | {"dup": ("1.0.0", "2.0.0")})
    c = bare(resolved=Resolved(node=node))
    short = values(by_title(c)["Resolved packages"])
    assert short["node packages"] == "31"
    assert short["node: dup"] == "1.0.0, 2.0.0"
    assert short["node: …"] == "11 more (--all shows every package)"
    assert sum(1 for k in short if k.startswith("node: pkg")) == 19
    full = values(by_title(c, full=True)["Resolved packages"])
    assert "node: …" not in full and "node: pkg29" in full
    assert values(by_title(c, limit=5)["Resolved packages"])["node: …"] == "26 more (--all shows every package)"


def test_repository_diff_flags_and_untracked() -> None:
    repo = Repo("https://r", "c" * 40, None, True, "x" * 300, diff_truncated=True, diff_redacted=True,
                untracked=("a.txt", "b.txt"))  # fmt: skip
    got = values(by_title(bare(repo=repo))["Repository"])
    assert got == {"remote": "https://r", "commit": "c" * 40, "dirty": "yes",
                   "diff": "300 bytes, truncated, redacted", "untracked": "a.txt, b.txt"}  # fmt: skip
    assert values(by_title(bare(repo=Repo(commit="c", diff=None)))["Repository"])["diff"] == "(not recorded)"


def test_redaction_and_provenance_with_workers() -> None:
    red = Redaction(2, ("TZ",), False, FrozenMap({"github-token": 3}))
    assert values(by_title(bare(redaction=red))["Redaction"]) == {
        "rules version": "2", "hashed values": "no", "values included": "TZ", "scrubbed github-token": "3",
    }  # fmt: skip
    prov = Provenance(Format.NOVAFABRIC, "0.1.0", "dist", capsule_id="01J", seal_present=True, global_run_id="g1",
                      workers=(Worker("01A", "CHILD", "WORKER", 1, "COMPLETE"),))  # fmt: skip
    got = values(by_title(bare(provenance=prov))["Provenance"])
    assert got["seal"] == "present" and got["global run id"] == "g1"
    assert got["worker 01A"] == "CHILD, WORKER, COMPLETE, rank 1"


def test_records_knows_what_each_format_leaves_out() -> None:
    assert records(bare(), "runtime:node") and records(bare(), "env:NODE_OPTIONS")
    assert not records(bare(), "env:HOME")  # twin drops session noise on purpose
    assert not records(bare(Format.NOVAFABRIC), "platform:distro")
    assert records(bare(Format.NOVAFABRIC), "platform:cpu_count")
    assert records(bare(Format.CODEINSTANCES), "http:calls") and not records(bare(), "http:calls")


def test_printable_escapes_terminal_control() -> None:
    assert printable("ok\x1b]0;pwned\x07 [red]x") == "ok\\x1b]0;pwned\\x07 [red]x"
    # a table cell is one row: newlines and Unicode's line separators are escaped too
    assert printable("tab\tnew\nline\r") == "tab\\x09new\\x0aline\\x0d"
    assert printable("a\u2028b\u2029c\x85d") == "a\\u2028b\\u2029c\\x85d"


# --- on the real example capsules -------------------------------------------------------


def test_real_twin_fixture() -> None:
    s = by_title(read_capsule(EXAMPLES / "twin" / "echarts-new-york.json"))
    assert values(s["Outcome"])["signature"] == "exit1:0aee0834ac9c4d2d"
    assert [r.value for r in s["Outcome"].rows if r.label == "key line"][1] == "✕ roundTime_locale"
    assert values(s["Platform"])["distro"] == "garuda"
    assert values(s["Runtimes"])["node"] == "22.23.3"
    assert values(s["Environment"])["TZ"] == "America/New_York"
    assert values(s["Resolved packages"])["node: @babel/code-frame"] == "7.10.4, 7.26.2"
    assert values(s["Locale"]) == {"time zone": "America/New_York", "locale": "en-US"}
    assert s["Clock and random values"].empty == NOT_RECORDED


def test_real_codeinstances_fixture() -> None:
    s = by_title(read_capsule(EXAMPLES / "codeinstances" / "fetch-greeting.json"))
    assert values(s["HTTP calls"]) == {"#1": "GET https://api.example.com/v1/greeting -> 200 OK (42 B)"}
    assert values(s["Clock and random values"]) == {"#1 clock": "2026-10-13T08:00:00.000000000Z"}
    assert values(s["Provenance"])["id"].startswith("sha256:1823a60b")
    assert s["Environment"].empty == NOT_RECORDED


def test_real_novafabric_fixtures() -> None:
    s = by_title(read_capsule(EXAMPLES / "novafabric" / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"))
    inputs = [r.value for r in s["Inputs / expected outputs"].rows]
    assert any(v.startswith("poem.txt ← inputs/poem.txt, sha256:110917a3") for v in inputs)
    assert values(s["Replay policy"])["egress"] == "deny"
    assert values(s["Provenance"])["seal"] == "present"
    assert values(s["Platform"])["cpu count"] == "8"
    assert s["Tools"].empty == NOT_RECORDED and s["Repository"].empty == NONE_RECORDED
    minimal = by_title(read_capsule(EXAMPLES / "novafabric" / "minimal-run"))
    assert values(minimal["Resolved packages"])["python packages"] == "46"
    assert next(r for r in minimal["Environment"].rows if r.label == "HOME").flag == "host-specific"


def test_each_format_says_what_it_records_in_its_own_reader() -> None:
    """The per-format scopes come from the readers: one per format, none kept elsewhere."""
    from runner.capsules import _readers, scope_of
    from runner.capsules.model import Format
    from runner.capsules.scope import Scope

    readers = {r.FORMAT: r for r in _readers()}
    assert set(readers) == set(Format)
    for fmt, reader in readers.items():
        assert isinstance(reader.SCOPE, Scope) and scope_of(fmt) is reader.SCOPE

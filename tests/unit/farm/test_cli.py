"""`replay farm report` and `history` on a real history file (no engine needed), and
`farm run`'s usage errors: the JSON envelope, the text view, the exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.cli.main import main
from runner.farm.records import Rate
from runner.farm.store import NightEntry, SqlStore

from tests.unit.farm.records import attempt, night, result
from tests.envelope import envelope_of


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two finished nights: one capsule starts reproducing, one turns flaky."""
    path = tmp_path / "farm.sqlite"
    store = SqlStore(path)
    verdicts = {"n1": ("different-failure", "reproduced"), "n2": ("reproduced", "flaky")}
    for day, (nid, (a, b)) in enumerate(verdicts.items(), 1):
        store.create_night(night(nid, f"2026-12-0{day}T02:00:00Z", None), {},
                           [NightEntry("aaaa1111", "caps/a.json", "twin"), NightEntry("bbbb2222", "caps/b", "novafabric")])
        store.add_result(result(nid, "aaaa1111", a, path="caps/a.json", signature="exit1:1234"))
        rec = attempt(nid, "bbbb2222", 1)
        store.start_attempt(rec)
        store.add_result(result(nid, "bbbb2222", b, path="caps/b", format="novafabric",
                                rate=Rate(4, 10, 0.17, 0.69) if b == "flaky" else None))
        store.finish_night(nid, f"2026-12-0{day}T03:00:00Z", 1, 1)
    store.close()
    return path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    rc = main([*args, "--json"])
    return rc, envelope_of(capsys.readouterr().out)


def test_report_json_is_the_envelope_in_attention_order(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _json(capsys, "farm", "report", "--db", str(db))
    assert (rc, doc["schema"], doc["command"], doc["exit_code"], doc["error"]) == (
        0, "replay.farm-report/1", "farm report", 0, None)
    res = doc["result"]
    assert [n["id"] for n in res["nights"]] == ["n1", "n2"]
    assert res["nights"][1]["counts"] == {"reproduced": 1, "flaky": 1}
    assert {(t["path"], t["kind"], t["before"]) for t in res["since_last_night"]} == {
        ("caps/a.json", "newly-reproducing", "different-failure"), ("caps/b", "flaky", "reproduced")}
    assert [(r["path"], r["group"], r["strip"]) for r in res["rows"]] == [
        ("caps/a.json", "changed", ["different-failure", "reproduced"]), ("caps/b", "newly-flaky", ["reproduced", "flaky"])]
    a = res["rows"][0]
    assert a["first_seen"]["night_id"] == "n1" and (a["last_change"]["night_id"], a["last_change"]["from"],
                                                    a["last_change"]["to"]) == ("n2", "different-failure", "reproduced")
    assert a["command"] == "replay caps/a.json" and res["window"] == 14 and res["groups"]["changed"] == 1
    b = res["rows"][1]
    assert (b["rate"]["failed"], b["rate"]["runs"], b["rate"]["nights"], b["rate"]["confidence"]) == (4, 10, 1, 0.95)
    rate = next(r for r in res["last_night"]["results"] if r["path"] == "caps/b")["rate"]
    assert (rate["failed"], rate["runs"]) == (4, 10)


def test_report_since_keeps_the_last_nights(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _json(capsys, "farm", "report", "--db", str(db), "--since", "1")
    assert rc == 0 and [n["id"] for n in doc["result"]["nights"]] == ["n2"]
    assert {t["before"] for t in doc["result"]["since_last_night"]} == {"new"}


def test_report_text_is_attention_first_and_says_each_transition_once(
        db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["farm", "report", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "newly-reproducing: caps/a.json (different-failure -> reproduced)\n" in text
    assert "flaky: caps/b (reproduced -> flaky)\n" in text  # once: no detail repeating the two states
    assert "verdicts: 1 reproduced, 1 flaky" in text
    assert text.index("new failures and changed verdicts (1)") < text.index("newly flaky (1)")
    assert "replay caps/a.json" in text and "2026-12-02 different-failure -> reproduced" in text
    assert "4/10 (17–69 %), 1 night(s)" in text


def test_history_by_id_prefix_by_recorded_path_and_by_content(db: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _json(capsys, "farm", "history", "aaaa", "--db", str(db))
    assert (rc, doc["schema"], doc["result"]["matched"]) == (0, "replay.farm-history/1",
                                                              "matched the id prefix aaaa (capsule aaaa1111)")
    assert [(n["night_id"], n["verdict"]) for n in doc["result"]["nights"]] == [
        ("n1", "different-failure"), ("n2", "reproduced")]
    monkeypatch.chdir(tmp_path)  # the recorded path names no file here: it is found as the history spells it
    rc, doc = _json(capsys, "farm", "history", "caps/b", "--db", str(db))
    assert rc == 0 and doc["result"]["matched"].startswith("matched the path caps/b as the history records it")
    assert [n["verdict"] for n in doc["result"]["nights"]] == ["reproduced", "flaky"]
    rc, doc = _json(capsys, "farm", "history", "ffff", "--db", str(db))
    assert (rc, doc["exit_code"], doc["result"]["nights"]) == (1, 1, [])
    assert doc["result"]["matched"].startswith("nothing matched ffff")
    assert main(["farm", "history", "caps/b", "--db", str(db)]) == 0
    assert "matched the path caps/b" in capsys.readouterr().out


def test_history_by_a_files_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from runner.farm.ids import content_id

    cap = tmp_path / "moved" / "x.json"
    cap.parent.mkdir()
    cap.write_text('{"twin": 1}')
    cid = content_id(cap)
    store = SqlStore(tmp_path / "farm.sqlite")
    store.create_night(night("n1", "2026-12-01T02:00:00Z", None), {}, [NightEntry(cid, "elsewhere/x.json", "twin")])
    store.add_result(result("n1", cid, "reproduced", path="elsewhere/x.json"))
    store.add_result(result("n1", cid[:4] + "0" * 28, "reproduced", path="other.json"))
    rc, doc = _json(capsys, "farm", "history", str(cap), "--db", str(tmp_path / "farm.sqlite"))
    assert (rc, doc["result"]["matched"]) == (0, f"matched the content of {cap} (capsule {cid})")
    rc, doc = _json(capsys, "farm", "history", cid[:4], "--db", str(tmp_path / "farm.sqlite"))
    assert rc == 2 and "matches several capsules" in doc["error"]["message"]


def test_a_missing_history_is_an_error_envelope_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.sqlite"
    rc, doc = _json(capsys, "farm", "report", "--db", str(missing))
    assert (rc, doc["exit_code"], doc["result"]) == (2, 2, None)
    assert doc["error"]["kind"] == "history" and doc["error"]["file"] == str(missing)
    assert not missing.exists()


@pytest.mark.parametrize("args, message", [
    (["farm", "run"], "at least one SOURCE"),
    (["farm", "run", "--resume", "caps"], "give no SOURCE"),
    (["farm", "run", "--resume"], "no unfinished night"),
    (["farm", "run", "caps", "--ref", "main;rm"], "expected a commit id (7-64 hex digits)"),
    (["farm", "run", "nope-dir"], "no such file or directory"),
    (["farm", "run", "caps", "--attempts", "5", "--max-attempts", "3"], "attempts <= max-attempts"),
    (["farm", "run", "caps", "--env", "NOEQUALS"], "expected NAME=VALUE"),
    (["farm", "run", "caps", "--env", "T=x", "--executor", "celery"], "a supplied value never leaves this machine"),
    (["farm", "run", "caps", "--require-valid"], "--require-valid needs at least one --trust-key"),
    (["farm", "run", "caps", "--trust-key", "nokey.pem"], "--trust-key nokey.pem: no such file"),
    (["farm", "run", "caps", "other"], "no capsule found in caps, other; no night recorded"),
    (["farm", "run", "caps", "--repo-url", "/__w/app/app"], "expected an http(s), git or ssh URL of the repository"),
])
def test_run_usage_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "caps").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "README.md").write_text("not a capsule")
    assert main([*args, "--db", str(tmp_path / "farm.sqlite")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    if (tmp_path / "farm.sqlite").exists():
        assert SqlStore(tmp_path / "farm.sqlite").nights() == []  # nothing recorded


@pytest.mark.parametrize("verdicts, code", [
    (("reproduced", "broken"), 0), (("not-reproduced",), 0), (("broken", "broken"), 1),
    (("broken", "infra-error"), 3), (("reproduced", "infra-error"), 3)])
def test_the_nights_exit(verdicts: tuple[str, ...], code: int) -> None:
    n = night("n1", "2026-12-01T02:00:00Z", results=tuple(result("n1", f"c{i}", v) for i, v in enumerate(verdicts)))
    assert n.exit_code == code


def test_without_an_engine_run_is_one_line_exit_3_and_records_no_night(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.farm.builders import write_instance

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    write_instance(tmp_path / "caps" / "a.json", ["python3", "-c", "print(1)"], "1\n")
    db = tmp_path / "farm.sqlite"
    rc, doc = _json(capsys, "farm", "run", str(tmp_path / "caps"), "--db", str(db))
    assert (rc, doc["result"], doc["error"]["kind"]) == (3, None, "engine")
    assert "no Docker engine answers" in doc["error"]["message"]
    assert SqlStore(db).history().nights == ()


def test_a_night_keeps_the_names_of_env_values_never_the_values_and_resume_asks_for_them_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from runner.farm.night_options import FarmOptions

    options = FarmOptions(supplied=("API_TOKEN",))
    assert options.stored()["supplied"] == ("API_TOKEN",)
    assert FarmOptions.from_stored(json.loads(json.dumps(options.stored()))) == options
    db = tmp_path / "farm.sqlite"
    store = SqlStore(db)
    store.create_night(night("n1", "2026-12-01T02:00:00Z", None), options.stored(), [NightEntry("aaaa1111", "a.json", "twin")])
    store.close()
    for given in ([], ["--env", "OTHER=x"]):
        assert main(["farm", "run", "--resume", "--db", str(db), *given]) == 2
        err = capsys.readouterr().err
        assert "began with --env API_TOKEN=..." in err and "values are never stored" in err, err


def test_a_capsule_not_in_the_last_night_keeps_its_path_and_command(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "farm.sqlite"
    store = SqlStore(path)
    for day, nid in enumerate(("n1", "n2", "n3"), 1):
        store.create_night(night(nid, f"2026-12-0{day}T02:00:00Z", None), {"repo": "/srv/app.git"}, [])
        store.add_result(result(nid, "aaaa1111", "reproduced", path="caps/a.json"))
        if nid == "n1":  # collected on the first night only, from a capsule that records its commit
            store.add_result(result(nid, "cccc3333", "reproduced", path="old/gone.json", commit="c" * 40))
        store.finish_night(nid, f"2026-12-0{day}T03:00:00Z", 1, 0)
    store.close()
    rc, doc = _json(capsys, "farm", "report", "--db", str(path))
    gone = doc["result"]["rows"][-1]
    assert rc == 0 and (gone["path"], gone["in_last_night"], gone["group"]) == ("old/gone.json", False, "steady")
    assert gone["strip"] == ["reproduced", None, None] and gone["command"] == "replay old/gone.json --repo /srv/app.git"


def test_the_reproduce_here_command_names_repo_url_in_place_of_a_ci_checkouts_path() -> None:
    from runner.farm.attention import replay_command

    ci = {"repo": "/__w/app/app", "repo_url": "https://github.com/acme/app"}
    assert replay_command("replay-in/capsule.json", True, ci) == \
        "replay replay-in/capsule.json --repo https://github.com/acme/app"
    assert replay_command("c.json", True, {"repo": "/srv/mirrors/app.git"}) == "replay c.json --repo /srv/mirrors/app.git"
    assert replay_command("c.json", False, ci) == "replay c.json"  # no commit recorded: no --repo

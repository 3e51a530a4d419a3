"""`replay gc` removes what replays that are gone left behind, and never anything else."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from runner.engine import LABEL, OWNER_LABEL, DockerEngine

from tests.envelope import result_of

pytestmark = pytest.mark.integration


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def objects(engine: DockerEngine) -> Any:
    """Containers and a network of a replay that is gone, of a live one, and one not replay's."""
    c = engine.client
    tag = uuid.uuid4().hex[:10]
    host = socket.gethostname()
    gone, alive = {LABEL: f"gc-{tag}", OWNER_LABEL: f"{host}:{dead_pid()}"}, {LABEL: f"gc-{tag}", OWNER_LABEL: f"{host}:{os.getpid()}"}
    made = {
        "gone": c.containers.create("replay-base/debian:bookworm", ["true"], labels=gone, name=f"gc-gone-{tag}"),
        "alive": c.containers.create("replay-base/debian:bookworm", ["true"], labels=alive, name=f"gc-alive-{tag}"),
        "foreign": c.containers.create("replay-base/debian:bookworm", ["true"], labels={"other": tag}, name=f"gc-foreign-{tag}"),
    }
    net = c.networks.create(f"gc-net-{tag}", labels=gone)
    yield tag, made, net
    for ctr in made.values():
        try:
            ctr.remove(force=True)
        except Exception:
            pass
    try:
        net.remove()
    except Exception:
        pass


def test_gc_lists_then_removes_only_what_a_gone_replay_left(objects: Any, engine: DockerEngine,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    tag, made, net = objects
    assert main(["gc", "--dry-run", "--json"]) == 0
    listed = {(f["kind"], f["name"]) for f in result_of(capsys.readouterr().out)["leftovers"]}
    assert {("container", f"gc-gone-{tag}"), ("network", f"gc-net-{tag}")} <= listed
    assert ("container", f"gc-alive-{tag}") not in listed and ("container", f"gc-foreign-{tag}") not in listed
    names = {c.name for c in engine.client.containers.list(all=True)}
    assert f"gc-gone-{tag}" in names  # a dry run removes nothing

    # removal, limited to this test's label so other replays on this machine are never touched
    assert main(["gc", "--label", f"gc-{tag}"]) == 0
    out = capsys.readouterr().out
    assert f"removed container gc-gone-{tag}" in out and "pid" in out
    names = {c.name for c in engine.client.containers.list(all=True)}
    assert f"gc-gone-{tag}" not in names and {f"gc-alive-{tag}", f"gc-foreign-{tag}"} <= names
    assert f"gc-net-{tag}" not in {n.name for n in engine.client.networks.list()}


def test_everything_a_replay_makes_names_its_owner(engine: DockerEngine) -> None:
    from runner.engine import RunSpec

    seen: list[dict[str, str]] = []
    spec = RunSpec(image="replay-base/debian:bookworm", argv=("sh", "-c", "true"), labels=((LABEL, "gc-owner"),))
    res = engine.run(spec)
    assert res.exit_code == 0
    net = engine.create_network(f"gc-owner-{uuid.uuid4().hex[:8]}", {LABEL: "gc-owner"})
    try:
        seen.append(engine.client.networks.get(net).attrs["Labels"])
    finally:
        engine.remove_network(net)
    assert seen[0][OWNER_LABEL] == f"{socket.gethostname()}:{os.getpid()}"


# -- --images and --cache: the disk replay takes -------------------------------------------------

DAY = 86400.0


def _record_as_gone_process(cache: Any, tag: str, image_id: str, when: float) -> None:
    """A use recorded by a replay that has ended (its lease then holds nothing)."""
    code = ("import sys; from pathlib import Path; from runner.machine import ledger; "
            "ledger.record(Path(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]))")
    subprocess.run([sys.executable, "-c", code, str(cache), tag, image_id, str(when)], check=True,
                   env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})


@pytest.fixture
def images(engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Replay images of this test's own repository: old in the ledger, fresh, held by a live replay,
    used by a running container; and one in the same repository that replay did not make."""
    import time

    from runner.machine import ledger

    c = engine.client
    tag = uuid.uuid4().hex[:10]
    repo = f"gc-test-{tag}/img"
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPLAY_IMAGE_REPO", repo)
    monkeypatch.setenv("REPLAY_CACHE", str(cache))
    made: dict[str, Any] = {}
    base = c.containers.create("replay-base/debian:bookworm", ["true"], labels={LABEL: f"gc-{tag}"})
    try:
        for name in ("old", "fresh", "held", "running", "foreign"):
            labels = {"other": tag} if name == "foreign" else {LABEL: "image", "replay.capsule": name}
            made[name] = base.commit(repository=repo, tag=name, conf={"Labels": labels})
    finally:
        base.remove(force=True)
    now = time.time()
    for name in ("old", "running", "foreign"):
        _record_as_gone_process(cache, f"{repo}:{name}", made[name].id, now - 30 * DAY)
    _record_as_gone_process(cache, f"{repo}:fresh", made["fresh"].id, now - 1 * DAY)
    ledger.record(cache, f"{repo}:held", made["held"].id, now - 30 * DAY)  # this process: alive, holding it
    alive = {LABEL: f"gc-{tag}", OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"}  # a running replay's
    running = c.containers.run(f"{repo}:running", ["sleep", "600"], detach=True, labels=alive)
    yield tag, repo, made
    running.remove(force=True)
    for image in c.images.list(name=repo):
        c.images.remove(image.id, force=True)


def test_gc_images_removes_only_replays_old_unused_images(images: Any, engine: DockerEngine,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    tag, repo, made = images

    def present() -> set[str]:
        return {t.rpartition(":")[2] for img in engine.client.images.list(name=repo) for t in img.tags}

    assert main(["gc", "--images", "--dry-run", "--json", "--label", f"gc-{tag}"]) == 0
    swept = result_of(capsys.readouterr().out)["images"]  # validated against gc.schema.json
    assert [i["name"] for i in swept["removed"]] == [f"{repo}:old"]
    assert swept["removed"][0]["size"] > 0 and "older than 14d" in swept["removed"][0]["why"]
    kept = {i["name"].rpartition(":")[2]: i["why"] for i in swept["kept"]}
    assert set(kept) == {"fresh", "held", "running"}  # the foreign one is not even listed
    assert "within 14d" in kept["fresh"] and "held by the running replay" in kept["held"]
    assert "used by container" in kept["running"] and "running" in kept["running"]
    assert present() == {"old", "fresh", "held", "running", "foreign"}  # a dry run removes nothing

    assert main(["gc", "--images", "--dry-run", "--label", f"gc-{tag}"]) == 0
    text = capsys.readouterr().out
    assert f"would remove image {repo}:old (" in text and "images: 1 would go" in text

    assert main(["gc", "--images", "--older-than", "14d", "--label", f"gc-{tag}"]) == 0
    assert f"removed image {repo}:old" in capsys.readouterr().out
    assert present() == {"fresh", "held", "running", "foreign"}

    assert main(["gc", "--images", "--older-than", "12h", "--label", f"gc-{tag}"]) == 0  # a shorter age
    capsys.readouterr()
    assert present() == {"held", "running", "foreign"}


def test_gc_cache_removes_the_least_recently_used_downloads_down_to_the_size(
        engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from runner.machine import disk

    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path))
    now = time.time()
    entries = {"a-oldest": 40 * DAY, "b-old": 20 * DAY, "c-recent": 2 * DAY, "d-now": 60.0}
    for name, age in entries.items():
        f = tmp_path / "downloads" / name / "pkg.tgz"
        f.parent.mkdir(parents=True)
        f.write_bytes(b"x" * 100_000)
        os.utime(f, (now - age, now - age))
    monkeypatch.setattr(disk, "TOOL_CACHE_LABEL", f"{LABEL}=toolcache-none")  # the machine's volumes stay out
    assert main(["gc", "--cache", "--max-size", "250K", "--dry-run", "--json", "--label", "gc-none"]) == 0
    swept = result_of(capsys.readouterr().out)["cache"]
    assert [i["name"] for i in swept["removed"]] == ["downloads/a-oldest", "downloads/b-old"]
    assert swept["freed"] == 200_000 and all(i["size"] == 100_000 for i in swept["removed"])
    assert sorted(p.name for p in (tmp_path / "downloads").iterdir()) == sorted(entries)  # nothing removed

    assert main(["gc", "--cache", "--max-size", "250K", "--label", "gc-none"]) == 0
    out = capsys.readouterr().out
    assert "removed download downloads/a-oldest (97.7K)" in out
    assert sorted(p.name for p in (tmp_path / "downloads").iterdir()) == ["c-recent", "d-now"]

    assert main(["gc", "--cache", "--max-size", "0", "--label", "gc-none"]) == 0  # the one in use stays
    assert "kept download downloads/d-now" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "downloads").iterdir()) == ["d-now"]


def test_gc_cache_removes_tool_cache_volumes_by_last_use_never_a_mounted_one(
        engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from runner.engine.inventory import DockerInventory
    from runner.machine import disk, ledger

    c, tag = engine.client, uuid.uuid4().hex[:10]
    label = f"toolcache-test-{tag}"  # this test's volumes only: the machine's own stay out of the sweep
    monkeypatch.setattr(disk, "TOOL_CACHE_LABEL", f"{LABEL}={label}")
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path))
    old, mounted = (c.volumes.create(f"replay-gocache-{name}-{tag}", labels={LABEL: label}) for name in ("old", "used"))
    holder = None
    try:  # something in each (an empty volume takes no room: the size left would hold it)
        for v in (old, mounted):
            c.containers.run("replay-base/debian:bookworm", ["sh", "-c", "head -c 100000 /dev/zero > /cache/x"],
                             remove=True, labels={LABEL: f"gc-{tag}"}, volumes={v.name: {"bind": "/cache", "mode": "rw"}})
        holder = c.containers.run("replay-base/debian:bookworm", ["sleep", "600"], detach=True,
                                  labels={LABEL: f"gc-{tag}"}, volumes={mounted.name: {"bind": "/cache", "mode": "rw"}})
        ledger.record_volume(tmp_path, old.name, time.time() - 30 * DAY)  # last handed to an attempt a month ago
        assert main(["gc", "--cache", "--max-size", "0", "--dry-run", "--json", "--label", "gc-none"]) == 0
        swept = result_of(capsys.readouterr().out)["cache"]
        assert [(i["kind"], i["name"]) for i in swept["removed"]] == [("tool-cache", old.name)]
        assert {(i["name"], i["why"]) for i in swept["kept"] if i["kind"] == "tool-cache"} == \
            {(mounted.name, "mounted by 1 container(s)")}
        assert main(["gc", "--cache", "--max-size", "0", "--label", "gc-none"]) == 0
        assert f"removed tool-cache {old.name}" in capsys.readouterr().out
        assert {v.name for v in c.volumes.list(filters={"label": f"{LABEL}={label}"})} == {mounted.name}
        assert DockerInventory(c).remove_volume(mounted.name) is False  # the engine's refusal: in use, it stays
    finally:
        if holder is not None:
            holder.remove(force=True)
        for v in c.volumes.list(filters={"label": f"{LABEL}={label}"}):
            v.remove(force=True)


@pytest.mark.parametrize("args, says", [
    (["--older-than", "fortnight"], "Invalid value for '--older-than': 'fortnight' is not a duration"),
    (["--images", "--older-than", "fortnight"], "Invalid value for '--older-than': 'fortnight' is not a duration"),
    (["--cache", "--max-size", "20 parsecs"], "--max-size '20 parsecs' is not a size"),
])
def test_gc_bad_ages_and_sizes_are_one_line_exit_2(args: list[str], says: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gc", *args, "--label", "gc-none"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_farm_run_gc_removes_old_images_after_the_night_and_keeps_the_nights(
        engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from tests.integration.helpers import farm_json
    from tests.unit.farm.builders import write_instance

    tag = uuid.uuid4().hex[:10]
    repo = f"gc-farm-{tag}/img"
    monkeypatch.setenv("REPLAY_IMAGE_REPO", repo)
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    base = engine.client.containers.create("replay-base/debian:bookworm", ["true"], labels={LABEL: f"gc-{tag}"})
    try:
        old = base.commit(repository=repo, tag="old", conf={"Labels": {LABEL: "image"}})
    finally:
        base.remove(force=True)
    _record_as_gone_process(tmp_path / "cache", f"{repo}:old", old.id, time.time() - 30 * DAY)
    write_instance(tmp_path / "caps" / "c.json", ["python3", "-c", "print('hi')"], "hi\n")
    try:
        rc, result = farm_json("run", tmp_path / "caps", "--db", tmp_path / "farm.sqlite", "--gc")
        assert rc == 0 and [r["verdict"] for r in result["results"]] == ["reproduced"]
        left = [img for img in engine.client.images.list(name=repo)]
        assert [t for img in left for t in img.tags if t == f"{repo}:old"] == [] and len(left) == 1
        from runner.machine import ledger

        assert left[0].id in ledger.usage(tmp_path / "cache").last_used  # the night recorded the image it used
    finally:
        for image in engine.client.images.list(name=repo):
            engine.client.images.remove(image.id, force=True)

"""Files reach containers through the engine (RunSpec.files, get_file), not host paths:
read-only where a bind mount was, and the recorded random values as a hook library reads them."""
from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.build.sources.baseimage import DEFAULT, ensure_base
from runner.config import Settings
from runner.engine import ContainerFile, DockerEngine, RunSpec
from runner.replay import BuiltImage, Progress, Replayer, ReplayOptions
from runner.replay.loading import Loader

pytestmark = pytest.mark.integration
CASE = Path(__file__).parents[1] / "cases/codeinstances/errors-and-binary/capsule.json"  # records a random value


@pytest.fixture(scope="module")
def base(engine: DockerEngine) -> str:
    return ensure_base(engine, Settings(), DEFAULT)


@pytest.fixture()
def label(engine: DockerEngine) -> Iterator[str]:
    value = f"test-files-{uuid.uuid4().hex[:8]}"
    yield value
    engine.cleanup(value)


def test_files_are_uploaded_before_start_root_owned_with_their_mode(engine: DockerEngine, base: str, label: str) -> None:
    files = (ContainerFile("/replay/in/a.json", b'{"a": 1}'), ContainerFile("/replay/in/k.key", b"KEY", 0o400),
             ContainerFile("/etc/ssl/certs/ca-certificates.crt", b"CA\n"))
    script = "cat /replay/in/a.json; echo; stat -c '%a %U %n' /replay /replay/in /replay/in/a.json /replay/in/k.key; " \
             "cat /etc/ssl/certs/ca-certificates.crt"
    res = engine.run(RunSpec(base, ("sh", "-c", script), labels=(("replay", label),), files=files, timeout_s=60))
    assert res.exit_code == 0, res.output
    assert res.stdout.decode().splitlines() == ['{"a": 1}', "755 root /replay", "755 root /replay/in",
                                                "444 root /replay/in/a.json", "400 root /replay/in/k.key", "CA"]


def test_get_file_reads_what_a_running_container_writes(engine: DockerEngine, base: str, label: str) -> None:
    spec = RunSpec(base, ("sh", "-c", "sleep 1; echo ready >> /replay/out/log; sleep 120"), labels=(("replay", label),),
                   files=(ContainerFile("/replay/out/log", b"begin\n", 0o644),))
    cid = engine.start(spec)
    try:
        assert engine.get_file(cid, "/replay/out/log").startswith(b"begin\n")
        deadline = time.monotonic() + 60
        while engine.get_file(cid, "/replay/out/log") != b"begin\nready\n":  # the event: the line appears
            assert time.monotonic() < deadline, "the container's line never appeared"
            time.sleep(0.1)
    finally:
        engine.stop(cid)


def test_recorded_random_values_reach_the_attempt_read_only(engine: DockerEngine, base: str, label: str) -> None:
    replayer = Replayer(ReplayOptions(label=label, timeout=60), Progress(), engine=engine)
    try:
        _, plan = Loader(replayer.options, replayer.settings).load(CASE)
        plan = dataclasses.replace(plan, network="none", http_calls=())  # only the values matter here
        with replayer.world(plan) as world:
            spec = replayer.run_spec(plan, BuiltImage(base, False, 0.0), world.attempt())
        assert spec.mounts == ()  # nothing from this machine's filesystem
        argv = ("sh", "-c", 'cat "$REPLAY_RANDOM_VALUES"; echo; stat -c "%a %U" "$REPLAY_RANDOM_VALUES"')
        res = engine.run(dataclasses.replace(spec, argv=argv, workdir="/"))
    finally:
        replayer.close()
    assert res.exit_code == 0, res.output
    doc, mode = res.stdout.decode().rsplit("\n", 2)[:2]
    assert json.loads(doc) == {"format": "replay-random-values/1", "values": [{"seq": 2, "base64": "q83vEjRWeJA="}]}
    assert mode == "444 root"

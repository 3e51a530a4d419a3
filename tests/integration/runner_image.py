"""The runner image, built once per test session, and `replay` run inside it against the
host's engine through the mounted socket (tests/integration/test_runner_image.py, test_ci_jobs.py)."""
from __future__ import annotations

import functools
from collections.abc import Sequence

from runner.config import Settings
from runner.engine import DockerEngine, Mount, RunResult, RunSpec

TAG = "replay-runner:test"  # rebuilt from the current sources each session; unchanged layers come from the cache
SOCKET = "/var/run/docker.sock"


@functools.lru_cache(maxsize=1)  # once per session, whichever module asks first
def runner_image() -> str:
    from runner.ci.runner_image import build

    return build(DockerEngine(), Settings(), TAG)


def run_in_image(engine: DockerEngine, label: str, argv: Sequence[str], mounts: Sequence[Mount] = (),
                 workdir: str = "/w", env: Sequence[tuple[str, str]] = (), timeout_s: float = 900) -> RunResult:
    """`docker run -v /var/run/docker.sock:/var/run/docker.sock ... IMAGE argv`; the engine clears entry points,
    so argv names the program (`replay`, or a CI script)."""
    spec = RunSpec(image=runner_image(), argv=tuple(argv), env=tuple(env), workdir=workdir, network="bridge",
                   labels=(("replay", label),), mounts=(Mount(SOCKET, SOCKET, False), *mounts), timeout_s=timeout_s)
    return engine.run(spec)

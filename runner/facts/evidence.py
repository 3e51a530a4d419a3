"""The evidence a variable is scored by (why.py): the project reading it, the output naming it,
a tool the command runs documenting it. Points, in docs/signature.md's words:

| evidence | points |
| --- | --- |
| the source at the recorded commit reads it (`os.Getenv("HOME")`, `process.env.X`, ...) | 40 |
| the command line reads it (`sh -c '... $X'`) | 40 |
| the output names it, or a path under a home directory (for HOME) | 25 |
| a tool the command runs documents it (`TZ` for node, `GOFLAGS` for go, `TERM` for any) | 15 |
| the capsule records it by name only | 5 |
| the host's value was recorded, replay mapped it to the container's own (HOME, USER; no tool points) | 3 |
"""
from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .reads import Read

SOURCE, COMMAND, OUTPUT, TOOL = 40, 40, 25, 15
# Read by most programs, whatever they are (libc, terminals, CI-aware test runners).
ANY_TOOL = {"HOME": "settings and caches live under it", "TERM": "the terminal's capabilities (colour, width)",
            "TZ": "libc's local time zone", "LANG": "the locale", "LC_ALL": "the locale", "CI": "CI-aware tools",
            "COLUMNS": "the output width", "NO_COLOR": "colour off", "FORCE_COLOR": "colour on"}
# What each tool's documentation names, beyond ANY_TOOL; a command's words are matched by basename.
TOOL_VARS: dict[str, frozenset[str]] = {
    "node": frozenset({"NODE_ENV", "NODE_OPTIONS", "NODE_PATH", "TZ", "NODE_TEST_CONTEXT"}),
    "go": frozenset({"GOFLAGS", "GOOS", "GOARCH", "CGO_ENABLED", "GOPATH", "GOCACHE", "GOTOOLCHAIN", "GODEBUG",
                     "GOEXPERIMENT", "GOMAXPROCS", "HOME", "TZ"}),
    "python": frozenset({"PYTHONHASHSEED", "PYTHONPATH", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS",
                         "PYTEST_ADDOPTS", "HOME", "TZ"}),
    "rust": frozenset({"RUSTFLAGS", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUST_BACKTRACE", "RUST_LOG",
                       "HOME"}),
    "ruby": frozenset({"RAILS_ENV", "RACK_ENV", "BUNDLE_GEMFILE", "RUBYOPT", "HOME", "TZ"}),
    "sh": frozenset({"HOME", "IFS", "ENV"}),
}
TOOL_OF = {"node": "node", "npm": "node", "npx": "node", "yarn": "node", "pnpm": "node", "jest": "node",
           "vitest": "node", "mocha": "node", "go": "go", "python": "python", "python3": "python",
           "pytest": "python", "uv": "python", "tox": "python", "cargo": "rust", "rustc": "rust", "ruby": "ruby",
           "bundle": "ruby", "rake": "ruby", "rspec": "ruby", "sh": "sh", "bash": "sh", "dash": "sh", "zsh": "sh",
           "make": "sh"}
_HOME_PATH = re.compile(r"(?<![\w.-])(?:/home/[^/\s\"':]+|/Users/[^/\s\"':]+|~)/[^\s\"':]*")


@dataclass(frozen=True)
class EnvEvidence:
    tools: frozenset[str]  # the runtimes and tools the command runs, by TOOL_OF's names ("node", "go")
    reads: Sequence[Read]  # the source's reads, then the command line's
    output: str  # the recorded output and the attempts' tails

    def read_names(self) -> Iterator[str]:
        """Every variable read, once, in the order found, but the ones the shell or replay sets for every run."""
        seen: set[str] = set()
        for r in self.reads:
            if r.name not in seen and r.name not in NOT_CANDIDATES:
                seen.add(r.name)
                yield r.name


# Set for every run by the shell or the image: a read of them is no sign of a recorded difference.
NOT_CANDIDATES = frozenset({"PATH", "PWD", "OLDPWD", "SHLVL", "IFS", "_", "HOSTNAME"})


def tools_run(argv: Sequence[str]) -> frozenset[str]:
    """The tools the command runs: its words' basenames, and the words of a `sh -c` script."""
    words = list(argv)
    for i, word in enumerate(argv[:-1]):
        if word == "-c" and os.path.basename(argv[0]) in ("sh", "bash", "dash", "zsh"):
            try:
                words += shlex.split(argv[i + 1])
            except ValueError:
                words += argv[i + 1].split()
    found = {TOOL_OF[b] for w in words if (b := os.path.basename(w)) in TOOL_OF}
    found |= {TOOL_OF["python"] for w in words if re.fullmatch(r"python3(\.\d+)?", os.path.basename(w))}
    return frozenset(found)


def env_score(name: str, ev: EnvEvidence, base: tuple[str, int], tool: bool = True) -> tuple[int, str]:
    """A variable's score and what it rests on, strongest first. `tool`: whether a tool documenting
    it counts (not for HOME or USER replay mapped to the container's own on purpose)."""
    found = [(points, said) for points, said in (_source(name, ev), _output(name, ev.output),
                                                 _tool(name, ev.tools) if tool else (0, "")) if points]
    found.append((base[1], base[0]))
    found.sort(key=lambda ps: -ps[0])
    return sum(p for p, _ in found), "; ".join(s for _, s in found if s)


def _source(name: str, ev: EnvEvidence) -> tuple[int, str]:
    read = next((r for r in ev.reads if r.name == name), None)
    if read is None:
        return 0, ""
    if read.where == "the command line":
        return COMMAND, f"command: the command line reads ${name}"
    return SOURCE, f"source: {read.where} reads {name}"


def _output(name: str, text: str) -> tuple[int, str]:
    word = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
    if re.search(word if len(name) >= 3 else rf"\${{?{re.escape(name)}\b|{word}=", text):
        return OUTPUT, f"output: names {name}"
    if name == "HOME" and (m := _HOME_PATH.search(text)):
        return OUTPUT, f"output: {m.group(0)[:120]} is a path under a home directory"
    return 0, ""


def _tool(name: str, tools: frozenset[str]) -> tuple[int, str]:
    for tool in sorted(tools):
        if name in TOOL_VARS.get(tool, frozenset()):
            return TOOL, f"tool: {tool} reads {name}"
    if tools and (name in ANY_TOOL or name.startswith("LC_")):
        return TOOL, f"tool: {name} is read by most programs ({ANY_TOOL.get(name, 'the locale')})"
    return 0, ""

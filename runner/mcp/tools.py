"""The tools `replay mcp` offers: each one CLI command, its arguments, its output schema.

A tool runs `python -m runner WORDS... --json` and
answers with that command's envelope; see runner/mcp/child.py.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..durations import format_duration
from ..replay.defaults import DEFAULT_ATTEMPTS, DEFAULT_MEMORY, DEFAULT_TIMEOUT_S
from .params import Param, argv, input_schema


@dataclass(frozen=True)
class ToolSpec:
    name: str
    words: tuple[str, ...]  # the CLI command: ("farm", "report")
    description: str
    params: tuple[Param, ...]
    long: bool = False  # builds images and runs containers: progress notifications, cancellable

    @property
    def command(self) -> str:
        """The envelope's `command` ("farm report")."""
        return " ".join(self.words)

    @property
    def schema_name(self) -> str:
        """The command's result schema in runner/schemas ("farm-report")."""
        return "-".join(self.words)

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.params)

    def argv(self, arguments: Mapping[str, Any] | None) -> list[str]:
        """The CLI words after `python -m runner`; ArgumentError for a bad argument."""
        words = argv(self.words, self.params, arguments)
        return _with_json(words)


def _with_json(words: list[str]) -> list[str]:
    cut = words.index("--")
    return [*words[:cut], "--json", *words[cut:]]


def _capsule(name: str = "capsule", what: str = "A capsule") -> Param:
    return Param(name, "path", f"{what}: a twin capsule file, a NovaFabric capsule directory, a CodeInstances "
                               "file, or an https:// URL of one. Relative paths are read from the server's "
                               "working directory.", required=True)


_REPO = Param("repo", "text", "Fetch the recorded commit from this clone, fork, mirror or git bundle (path or URL).",
              "--repo")
_ENV = Param("env", "env", "NAME=VALUE items: supply or override a variable for the replayed command "
                           "(NAME= sets it empty).", "--env")
_REF = Param("ref", "commit", "Replay the recorded environment against this commit instead (7-64 hex digits), "
                              "without the recorded diff.", "--ref")
_PATCH = Param("patch", "path", "A patch file applied on top of the source; the verdict becomes fixed / not-fixed.",
               "--patch")
_SOURCE = Param("source", "path", "Use this directory as the source (for capsules that record no commit).",
                "--source")
_TIMEOUT = Param("timeout", "duration", "Time limit per attempt: seconds (a number) or a duration such as "
                                        f"\"90s\", \"15m\", \"1h\" (default {format_duration(DEFAULT_TIMEOUT_S)}).", "--timeout")
_TRUST = Param("trust_key", "paths", "PEM public keys of trusted signers.", "--trust-key")
_DB = Param("db", "text", "The farm history: a SQLite file or postgresql://USER@HOST/DB "
                          "(default: REPLAY_FARM_DB, else farm.sqlite in the user's data dir).", "--db")

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("inspect", ("inspect",), "What a capsule records: format, id, command, recorded outcome, platform, "
             "runtimes, packages, environment. Reads the capsule only.", (_capsule(),)),
    ToolSpec("diff", ("diff",), "Compare the recorded environments of two capsules (A and B): both outcomes, "
             "the differences that could change the outcome, and the command to run next. exit_code 1 when "
             "they differ (a result, not an error).",
             (_capsule("a", "Capsule A (e.g. the failing run)"), _capsule("b", "Capsule B (e.g. a passing run)"))),
    ToolSpec("verify", ("verify",), "Check a capsule's integrity (digests, id, seal, signatures); exit_code 1 "
             "when it is invalid (a result, not an error).", (_capsule(), _TRUST)),
    ToolSpec("replay", ("run",), "Rebuild the capsule's recorded environment as an image, rerun its command "
             "in fresh containers and judge whether the recorded outcome came back (result.verdict: reproduced, "
             "not-reproduced, different-failure, flaky, inconclusive; with patch: fixed / not-fixed). Slow "
             "(builds an image): sends progress notifications; cancelling it stops the replay and removes its "
             "containers and networks.",
             (_capsule(), Param("attempts", "count", f"Runs in fresh containers (default {DEFAULT_ATTEMPTS}).",
                                "--attempts", low=1, high=50),
              _ENV, _REPO, _REF, _PATCH, _SOURCE, _TIMEOUT,
              Param("memory", "text", f"Memory limit per attempt, like 512m or 4g (default {DEFAULT_MEMORY}).", "--memory"),
              Param("http", "path", "Serve this CodeInstances instance's recorded HTTP calls.", "--http"),
              _TRUST,
              Param("require_valid", "flag", "Refuse a capsule whose signer is not one of trust_key.",
                    "--require-valid"),
              Param("allow_unverified", "flag", "Replay a capsule that does not verify (refused by default).",
                    "--allow-unverified")),
             long=True),
    ToolSpec("bisect", ("bisect",), "Find a minimal set of environment facts that turns the good capsule's run "
             "into the bad one's recorded failure (or, with commits, the first failing commit; with sweep, the "
             "first failing version of one fact). exit_code 0 when found, 1 when not. Slow: progress "
             "notifications; cancellable.",
             (_capsule("bad", "The capsule of the run that failed"),
              Param("good", "path", "The capsule of a run that passed.", "--good", required=True),
              Param("attempts", "count", "The most runs per trial (default 3).", "--attempts", low=1, high=100),
              _REPO, _ENV, _TIMEOUT,
              Param("commits", "flag", "Bisect the commits from good's to bad's in bad's environment instead.",
                    "--commits"),
              Param("sweep", "text", "Find the first failing version of one differing fact (runtime:node, "
                                     "tool:npm, pin:python:six...) instead.", "--sweep"),
              Param("jobs", "count", "Trials run at the same time (default: the cores).", "--jobs", low=1, high=64)),
             long=True),
    ToolSpec("farm_report", ("farm", "report"), "The reproduction farm's history: summary counts, what changed "
             "since the last night, each capsule's nights.",
             (_DB, Param("since", "count", "Only the last N nights.", "--since", low=1, high=100000))),
    ToolSpec("farm_history", ("farm", "history"), "One capsule's nights in the farm history; exit_code 1 when "
             "the history holds none for it.",
             (Param("capsule", "text", "A capsule (its path) or its id (a prefix will do).", required=True), _DB)),
    ToolSpec("render", ("render",), "The Dockerfile replay would build for a capsule (a dry run: nothing is "
             "built). result.dockerfile is its text; result.notes what replay said about it.",
             (_capsule(), _ENV, _REPO, _REF, _PATCH, _SOURCE,
              Param("builder", "choice", "The Dockerfile for this builder (default classic).", "--builder",
                    choices=("classic", "buildkit")),
              Param("no_pin", "flag", "Keep the lockfile's versions instead of the recorded installed ones.",
                    "--no-pin"),
              Param("all_runtimes", "flag", "Install every recorded runtime a source offers.", "--all-runtimes")),
             long=True),
)

BY_NAME = {tool.name: tool for tool in TOOLS}

"""Parameters several commands share, declared once: the capsule, the options every command that
replays takes (what to build, what to trust), and the global options every command takes."""
from __future__ import annotations

from ..units import DURATION_HELP
from ..units import format_duration
from ..replay.defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_MEMORY, DEFAULT_TIMEOUT_S
from ..verdict.rate import CONFIDENCE_RANGE, DEFAULT_CONFIDENCE
from .spec import Param

# The help panels `replay run --help` groups its options in (shared options carry theirs everywhere).
WHAT = "What to replay"
TRUSTING = "Trust"
NETWORK = "Network"
NOISE = "Noise"
AFTER = "After it reproduces"
OUTPUT = "Output"
PANELS = (WHAT, TRUSTING, NETWORK, NOISE, AFTER, OUTPUT)  # in this order in a command's help

CAPSULE_HELP = ("A twin capsule, a NovaFabric capsule directory, or a CodeInstances file; or an https:// or http:// "
                "URL of a capsule file (downloaded to the cache, then read like a file); `-`: a JSON capsule on stdin.")


def capsule(name: str = "capsule", what: str = "", metavar: str = "CAPSULE", required: bool = True) -> Param:
    return Param(name, "capsule", f"{what}{' ' if what else ''}{CAPSULE_HELP}", metavar=metavar, required=required)


def timeout(per: str) -> Param:
    return Param("timeout", "duration", f"Time limit {per} ({DURATION_HELP}; default {format_duration(DEFAULT_TIMEOUT_S)}).",
                 ("--timeout",), DEFAULT_TIMEOUT_S, metavar="DURATION", low=1, panel=WHAT)


ENV = Param("env", "env", "NAME=VALUE: supply or override a variable for the replayed command (NAME= sets it empty); "
            "repeatable.", ("--env", "-e"), [], metavar="NAME=VALUE", panel=WHAT)
SALT = Param("salt", "text", "The salt twin hashed values with, to check --env values.", ("--salt",),
             envvar="REPLAY_SALT", mcp=False, panel=WHAT)
REPO = Param("repo", "text", "Fetch the recorded commit from this clone, fork, mirror or git bundle (path or URL).",
             ("--repo",), metavar="PATH_OR_URL", panel=WHAT)
MIRROR = Param("mirror", "texts", "Fetch a recorded remote that starts with PREFIX from PATH_OR_URL instead (the rest "
               "of the remote kept; the longest PREFIX wins, as git's insteadOf); repeatable; beside the "
               "REPLAY_MIRRORS file's rules. --repo still serves every capsule.", ("--mirror",), [],
               metavar="PREFIX=PATH_OR_URL", panel=WHAT)
REF = Param("ref", "commit", "Replay the recorded environment against this commit instead (7-64 hex digits), "
            "without the recorded diff.", ("--ref",), metavar="COMMIT", panel=WHAT)
PATCH = Param("patch", "text", "Apply this fix on top of the source; the verdict becomes fixed / not-fixed. A "
              "file, or the diff itself (--patch \"$(git -C DIR diff)\").", ("--patch",), metavar="FILE|DIFF", panel=WHAT)
SOURCE = Param("source", "path", "Use this directory as the source (for capsules that record no commit).",
               ("--source",), metavar="DIR", panel=WHAT)
HTTP_IGNORE = Param("http_ignore", "texts", "Leave this query parameter, form or JSON body field, or header out of "
                    "matching the recorded HTTP calls (any case); repeatable.", ("--http-ignore",), [],
                    metavar="NAME", panel=NETWORK)
HTTP = Param("http", "path", "Serve this CodeInstances instance's recorded HTTP calls.", ("--http",), metavar="FILE", panel=NETWORK)
ALL_RUNTIMES = Param("all_runtimes", "flag", "Install every recorded runtime a source offers.", ("--all-runtimes",),
                     False, panel=WHAT)
NO_PIN = Param("no_pin", "flag", "Keep the lockfile's versions instead of the recorded installed ones.",
               ("--no-pin",), False, panel=WHAT)
NO_SEEDS = Param("no_seeds", "flag", "Draw seeds anew: do not apply the seeds the recorded run names (Hypothesis, "
                 "pytest-randomly, go test -shuffle, jest, PYTHONHASHSEED) nor the capsule's pin.", ("--no-seeds",),
                 False, panel=NOISE)
MEMORY = Param("memory", "size", f"Memory limit per attempt, like 512m or 4g (default {DEFAULT_MEMORY}).",
               ("--memory",), DEFAULT_MEMORY, metavar="SIZE", panel=WHAT)
KEEP = Param("keep", "flag", "Keep the first attempt that ended as recorded (or, when none did, the last one) as a "
             "stopped container, its files as the run left them, and print the command that enters it (replay shell "
             "--kept ID); `replay gc` removes it.", ("--keep",), False, panel=AFTER)
JUNIT = Param("junit", "path", "Also write the answer as JUnit XML to FILE.", ("--junit",), metavar="FILE", mcp=False, panel=OUTPUT)

TRUST_KEY = Param("trust_key", "paths", "PEM public key of a trusted signer (repeatable).", ("--trust-key",), [],
                  metavar="FILE", panel=TRUSTING)
REQUIRE_VALID = Param("require_valid", "flag", "Also refuse (exit 1) a capsule whose signer is not one of the "
                      "--trust-keys.", ("--require-valid",), False, panel=TRUSTING)
ALLOW_UNVERIFIED = Param("allow_unverified", "flag", "Replay a capsule that does not verify (refused, exit 1, by "
                         "default).", ("--allow-unverified",), False, panel=TRUSTING)
TRUST = (TRUST_KEY, REQUIRE_VALID, ALLOW_UNVERIFIED)

# What to build and against which source: the same on every command that plans a capsule.
BUILD = (ENV, REPO, MIRROR, REF, PATCH, SOURCE, ALL_RUNTIMES, NO_PIN, NO_SEEDS, HTTP_IGNORE)

# When a replay stops (runner/verdict/sampling.py): when decided, or when the budget ends.
ATTEMPTS = Param("attempts", "count", "Exactly N runs (each side of a fix check). Default: stop when decided: 3 runs "
                 "that agree, more while they disagree (up to --max-attempts and --budget).", ("--attempts", "-n"),
                 low=1, high=50, default_shown="stop when decided", panel=NOISE)
MAX_ATTEMPTS = Param("max_attempts", "count", f"The most runs while they disagree (default {DEFAULT_MAX_ATTEMPTS}); "
                     "per side of a fix check.", ("--max-attempts",), low=1, high=1000,
                     default_shown=str(DEFAULT_MAX_ATTEMPTS), panel=NOISE)
BUDGET = Param("budget", "duration", f"Time for the attempts while they disagree ({DURATION_HELP}; default: no "
               "limit but --max-attempts); per side of a fix check; the first 3 always run.", ("--budget",),
               metavar="DURATION", low=1, panel=NOISE)
CONFIDENCE = Param("confidence", "number", "The confidence rates and fix checks are stated at (FIXED only when the "
                   "patched rate is below the unpatched one's at it).", ("--confidence",), DEFAULT_CONFIDENCE,
                   low=CONFIDENCE_RANGE[0], high=CONFIDENCE_RANGE[1], panel=NOISE)
STOPPING = (ATTEMPTS, MAX_ATTEMPTS, BUDGET, CONFIDENCE)

DB = Param("db", "text", "The farm history: a SQLite file (default: farm.sqlite in the user's data dir) or "
           "postgresql://USER@HOST/DB.", ("--db",), envvar="REPLAY_FARM_DB", metavar="FILE_OR_URL")
ALL = Param("show_all", "flag", "List everything, the unremarkable too.", ("--all",), False)

# The global options: every command takes them (declared here once, added to each command).
JSON = Param("json", "flag", "Print one JSON object (the envelope every command uses) on stdout.", ("--json",), False,
             mcp=False, panel=OUTPUT)
QUIET = Param("quiet", "flag", "No progress on stderr (errors still go there).", ("--quiet", "-q"), False, mcp=False, panel=OUTPUT)
VERBOSE = Param("verbose", "flag", "Say more: stream build logs and the command's output where there are any.",
                ("--verbose", "-v"), False, mcp=False, panel=OUTPUT)
COLOR = Param("color", "choice", "Colour on a terminal: auto (when it is one and NO_COLOR is unset), always, never.",
              ("--color",), "auto", choices=("auto", "always", "never"), mcp=False, panel=OUTPUT)
NO_COLOR = Param("no_color", "flag", "No colour (as --color never); also when the NO_COLOR variable is set.",
                 ("--no-color",), False, mcp=False, panel=OUTPUT)
DEBUG = Param("debug", "flag", "Show the traceback of an unexpected error.", ("--debug",), False, envvar="REPLAY_DEBUG",
              mcp=False, panel=OUTPUT)
GLOBALS = (JSON, QUIET, VERBOSE, COLOR, NO_COLOR, DEBUG)
# `replay --version`: the one option of `replay` itself (before any command)
VERSION = Param("version", "flag", "Print replay's version and exit (engine and SDK versions: replay doctor).",
                ("--version", "-V"), False, mcp=False)

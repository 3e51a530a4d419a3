"""Every command, declared once (spec.py says what a declaration holds).

The CLI, the MCP tools, the result schemas, `replay help` and the docs' option tables are all
made from this list; a test checks the CLI and the MCP tools agree on every command.
"""
from __future__ import annotations

from types import MappingProxyType

from ..units import DURATION_HELP
from ..replay.defaults import DEFAULT_ATTEMPTS, DEFAULT_BISECT_MAX_RUNS, DEFAULT_FARM_MAX_ATTEMPTS, DEFAULT_FIXED_AFTER
from ..verdict.rate import CONFIDENCE_RANGE, DEFAULT_CONFIDENCE
from . import common as c
from .spec import Command, Param

_REPLAY_EXITS = ((0, "reproduced (or fixed)"), (1, "another verdict"), (2, "bad input"),
                 (3, "the environment failed"))
_READ_EXITS = ((0, "done"), (2, "bad input"))

RUN = Command(
    "run", "Replay CAPSULE: rebuild the recorded environment, rerun the command, judge the outcome.",
    (c.capsule(), *c.STOPPING, c.timeout("per attempt"), c.MEMORY, *c.BUILD, c.SALT, c.HTTP, *c.TRUST,
     Param("no_alternatives", "flag", "Replay the plan's own environment only: never the others the capsule also "
           "admits (a package recorded at several versions) when it does not reproduce.", ("--no-alternatives",),
           False, panel=c.WHAT),
     c.KEEP,
     Param("show_all", "flag", "Show every table (as -v): the steps, the attempts, every fidelity row.", ("--all",),
           False, mcp=False, panel=c.OUTPUT),
     Param("comment", "path", "Also write a pull-request comment (Markdown) to FILE.", ("--comment",),
           metavar="FILE", mcp=False, panel=c.OUTPUT),
     c.JUNIT,
     Param("debugger", "flag", "Run the command once under its runtime's debugger (node --inspect-brk, debugpy, "
           "Delve for go test / go run), waiting for a client on 127.0.0.1, and print how to attach.",
           ("--debugger",), False, mcp=False, panel=c.AFTER),
     Param("debugger_port", "count", "With --debugger: the port on 127.0.0.1 (default: 9229 node, 5678 python, "
           "2345 go).", ("--debugger-port",), low=1, high=65535, metavar="N", mcp=False, panel=c.AFTER),
     Param("workdir", "path", "Run DIR, a checkout you edit, in place of the recorded source (mounted read-only: "
           "nothing is built again); the report shows its diff against the recorded commit.", ("--workdir",),
           metavar="DIR", mcp=False, panel=c.AFTER),
     Param("watch", "flag", "With --workdir and --attempts 1: run again on every saved change, a verdict line "
           "each (Ctrl-C ends).", ("--watch",), False, mcp=False, panel=c.AFTER)),
    "replaying:run", _REPLAY_EXITS, result="replayed:Replayed", read_only=False, long=True, mcp="replay",
    help="`replay CAPSULE` is `replay run CAPSULE`. The capsule is verified first (refused, exit 1, when it does "
         "not verify unless --allow-unverified), the image built (cached: a second replay builds nothing) and the "
         "command run in fresh containers with no network but the recorded HTTP calls.",
    mcp_help="result.verdict: reproduced, not-reproduced, different-failure, flaky, inconclusive; with patch: "
             "fixed / not-fixed. Slow (builds an image): sends progress notifications; cancelling it stops the "
             "replay and removes its containers and networks.",
    examples=("replay examples/tz-clock/capsule.json --repo examples/tz-clock/repo.bundle",
              "replay capsule.json --env TZ=UTC --timeout 15m -n 5",
              "replay capsule.json --debugger",
              "replay capsule.json --workdir ../app --attempts 1 --watch",
              "replay https://ci.example.com/artifacts/capsule.json --json"))

INSPECT = Command(
    "inspect", "Show what a capsule records: format, id, command and outcome first, then every fact.",
    (c.capsule(), Param("show_all", "flag", "List every resolved package.", ("--all",), False, mcp=False)),
    "reading:inspect", _READ_EXITS, result="answers:Inspected", mcp="inspect", mcp_help="Reads the capsule only.",
    examples=("replay inspect capsule.json", "replay inspect capsule.json --all", "replay inspect capsule.json --json"))

DIFF = Command(
    "diff", "Compare the recorded environments of two capsules: the facts that could change the outcome.",
    (c.capsule("a", "Capsule A (e.g. the failing run).", "A"), c.capsule("b", "Capsule B (e.g. a passing run).", "B"),
     Param("show_all", "flag", "List every differing fact, not only counts.", ("--all",), False, mcp=False),
     c.REPO, c.MIRROR),
    "reading:diff", ((0, "the same"), (1, "they differ"), (2, "bad input")), result="answers:Compared", mcp="diff",
    help="Ends with the command to run next, carrying --repo and --mirror as given here.",
    mcp_help="Both outcomes, the differences that could change the outcome, and the command to run next. "
             "exit_code 1 when they differ (a result, not an error).",
    examples=("replay diff failing.json passing.json", "replay diff failing.json passing.json --json"))

VERIFY = Command(
    "verify", "Check a capsule's integrity (digests, id, seal, signatures).",
    (c.capsule(), c.TRUST_KEY,
     Param("patch", "path", "twin's habit: see replay CAPSULE --patch.", ("--patch",), hidden=True, mcp=False),
     Param("ref", "text", "twin's habit: see replay CAPSULE --ref.", ("--ref",), hidden=True, mcp=False)),
    "reading:verify", ((0, "valid"), (1, "invalid, or no valid signature from a --trust-key"), (2, "bad input")),
    mcp="verify", mcp_help="exit_code 1 when it is invalid (a result, not an error).",
    examples=("replay verify capsule-dir/ --trust-key dana.pub.pem",),
    result="answers:Verified")

SIGNATURE = Command(
    "signature", "Print the key lines and the failure signature of a failed run's output, as twin computes it.",
    (Param("file", "text", "The command's output (stdout and stderr interleaved); '-' or nothing reads stdin.",
           default="-", metavar="FILE|-"),
     Param("exit_code", "count", "The command's exit code (0-255; a signal: --signal).", ("--exit-code",),
           low=0, high=255, metavar="N"),
     Param("signal", "text", "The signal that ended it (e.g. SIGSEGV).", ("--signal",), metavar="NAME")),
    "reading:signature", _READ_EXITS, result="answers:Signed", mcp="signature",
    help="The signature is on the last line alone, so scripts can `tail -1` it.",
    examples=("npm test > test.log 2>&1; replay signature test.log --exit-code $?",))

RENDER = Command(
    "render", "Print the Dockerfile replay would build (a dry run), or write the build context with -o DIR.",
    (c.capsule(),
     Param("output", "path", "Write the whole build context here, and print the `docker build` / `docker run` lines "
           "that replay it by hand (removed again if writing it fails).", ("--output", "-o"), metavar="DIR",
           mcp=False),
     *c.BUILD,
     Param("builder", "choice", "The Dockerfile for this builder: classic (builds with either) or buildkit (cache "
           "mounts, and for an npm lockfile that runs no install scripts an installer node).", ("--builder",),
           "classic", choices=("classic", "buildkit")),
     *c.TRUST),
    "reading:render", _READ_EXITS + ((1, "the capsule does not verify"), (3, "the environment failed")),
    mcp="render", long=True,
    mcp_help="Nothing is built. result.dockerfile is its text; result.notes what replay said about it.",
    examples=("replay render capsule.json > Dockerfile", "replay render capsule.json -o ctx/ --repo ../app.git"),
    result="answers:RenderedAnswer")

SHELL = Command(
    "shell", "Open bash in the replay's world: the recorded environment, clock and HTTP calls; in the image, or in "
             "the state a kept attempt (--keep) left.",
    (c.capsule(what="Its image, before the command ran (or give --kept / --last).", required=False),
     Param("kept", "text", "Enter this kept attempt's state instead (its files as the run left them): the ID "
           "`replay CAPSULE --keep` printed.", ("--kept",), metavar="ID"),
     Param("last", "flag", "Enter the newest kept attempt's state.", ("--last",), False),
     *c.BUILD, c.HTTP, *c.TRUST),
    "replaying:shell", ((0, "the shell's own exit code"), (2, "bad input"), (3, "the environment failed")),
    read_only=False,
    help="The recorded command is printed on entry and is in the shell's history (Up). The network is the "
         "replay's: none, or the recorded HTTP calls served by the sidecar (those that matched nothing are "
         "listed when the shell ends). Input may be piped: `echo 'ls' | replay shell --last`.",
    examples=("replay shell capsule.json --repo ../app.git", "replay shell --kept 3f2a1c9d0b7e",
              "replay shell --last"))

BISECT = Command(
    "bisect", "Find the facts that turn GOOD into BAD's recorded failure (or the first failing commit or version).",
    (c.capsule("bad", "The capsule of the run that failed.", "BAD"),
     Param("good", "path", "The capsule of a run that passed (every mode but --fixed-at).", ("--good",),
           metavar="GOOD"),
     Param("attempts", "count", "The most runs one commit, version or set of facts gets. By default as many as the "
           "confidence needs: one recorded failure decides, a pass counts once a failing run would have shown at "
           "the confidence.", ("--attempts",), low=1, high=100, default_shown="as needed"),
     Param("confidence", "number", "How sure an answer must be to exit 0; below it, exit 1 with what is known.",
           ("--confidence",), DEFAULT_CONFIDENCE, low=CONFIDENCE_RANGE[0], high=CONFIDENCE_RANGE[1]),
     Param("max_runs", "count", "The most runs in all, both ends included.", ("--max-runs",),
           DEFAULT_BISECT_MAX_RUNS, low=1, high=100000),
     Param("budget", "duration", "The most wall time (no limit by default).", ("--budget",), metavar="DURATION",
           low=1),
     Param("jobs", "count", "Trials run at the same time.", ("--jobs", "-j"), low=1, high=64,
           default_shown="the cores"),
     c.timeout("per run"), c.REPO, c.MIRROR, c.ENV, c.SALT, c.HTTP_IGNORE,
     Param("commits", "flag", "Bisect the commits from GOOD's to BAD's in BAD's environment instead.", ("--commits",),
           False),
     Param("fixed_at", "text", "With --commits and no --good: find the first commit after BAD's where its recorded "
           "failure is gone, up to this one (where it is).", ("--fixed-at",), metavar="COMMIT"),
     Param("resume", "flag", "Take the trial outcomes the last bisect of the same question kept (by image and item) "
           "instead of running them again, and go on from there (never by default: each bisect keeps its own).",
           ("--resume",), False),
     Param("sweep", "text", "Find the first failing version of one differing fact (runtime:node, tool:npm, "
           "pin:python:six, pin:node:NAME@VERSION for one of several copies...) instead.", ("--sweep",),
           metavar="FACT"),
     Param("no_cache_reuse", "flag", "Share no test-tool cache between trials: jest's and Python's bytecode start "
           "cold, Go's build cache from what each image compiled ahead.", ("--no-cache-reuse",), False),
     Param("pin", "flag", "Pin BAD's failure first (replay pin), then bisect under the pin: a flaky failure at "
           "the deterministic cost. A capsule written by replay pin -o is bisected under its pin anyway.",
           ("--pin",), False),
     c.KEEP, c.JUNIT, *c.TRUST),
    "bisect:bisect", ((0, "found at --confidence"), (1, "not found: baseline fails, not-reproduced, no culprit, "
                                                          "undecided (the likeliest answers, each one's probability)"),
                      (2, "bad input"),
                      (3, "the environment failed")),
    read_only=False, long=True, mcp="bisect",
    mcp_help="exit_code 0 when found, 1 when not. Slow: progress notifications; cancellable.",
    examples=("replay bisect failing.json --good passing.json --repo ../app.git",
              "replay bisect failing.json --good passing.json --commits",
              "replay bisect failing.json --commits --fixed-at 4f2a1c9 --repo ../app.git",
              "replay bisect failing.json --good passing.json --sweep runtime:node"),
    result="replayed:Bisected")

PIN = Command(
    "pin", "Find the setting (a seed, the test order, PYTHONHASHSEED, GOMAXPROCS, the CPU count, the clock) under "
           "which CAPSULE's recorded failure comes back in every run.",
    (c.capsule(),
     Param("pin_runs", "count", "Runs a setting must fail, every one, to pin the failure.", ("--pin-runs",), 10,
           low=2, high=1000),
     Param("budget", "duration", "The most wall time for the search (no limit by default).", ("--budget",),
           metavar="DURATION", low=1),
     Param("jobs", "count", "Settings tried at the same time.", ("--jobs", "-j"), low=1, high=64,
           default_shown="the cores"),
     Param("output", "path", "Write the capsule with its pin here (twin capsules): replay, bisect and fix checks "
           "of it run pinned.", ("--output", "-o"), metavar="FILE"),
     c.CONFIDENCE, c.timeout("per run"), c.MEMORY, *c.BUILD, *c.TRUST),
    "replaying:pin", ((0, "pinned"), (1, "not pinned: each axis tried, with its rate"), (2, "bad input"),
                (3, "the environment failed")),
    read_only=False, long=True, mcp="pin",
    help="Each setting is tried alone over the recorded run's own (its recorded seeds applied), in fresh "
         "containers of one image: a setting that lets a run pass is out; the first to fail --pin-runs runs of "
         "--pin-runs is the pin. With --no-seeds the recorded seeds are not tried first.",
    mcp_help="exit_code 0 when pinned (result.settings, result.command), 1 when not (result.axes: each axis's "
             "rate). Slow: progress notifications; cancellable.",
    examples=("replay pin capsule.json", "replay pin capsule.json -o pinned.json --pin-runs 20",
              "replay pin capsule.json --budget 10m --json"),
    result="replayed:Pinned")

DOCTOR = Command(
    "doctor", "Check this machine: engine and versions, builder, base images, cache, registries, settings.",
    (), "housekeeping:doctor", ((0, "ready (warnings allowed)"), (3, "something every replay needs is missing")),
    mcp="doctor", mcp_help="result.checks: each check, its status and the fix.",
    examples=("replay doctor", "replay doctor --json"),
    result="answers:Diagnosed")

GC = Command(
    "gc", "Remove what replays that are gone left behind; with --images / --cache, old images and caches.",
    (Param("images", "flag", "Also remove replay's own images not used within --older-than.", ("--images",), False),
     Param("older_than", "duration", f"Only what is older than this ({DURATION_HELP}): the containers --keep kept "
           "(default: every one), and with --images the images (default 14d).", ("--older-than",),
           metavar="DURATION", low=0),
     Param("cache", "flag", "Also shrink the download cache, replay's BuildKit cache mounts and the machine's "
           "tool-cache volumes (Go's build cache), least recently used first.", ("--cache",), False),
     Param("max_size", "text", "With --cache: what may stay (e.g. 20G, 500M; default 20G).", ("--max-size",),
           metavar="SIZE"),
     Param("dry_run", "flag", "List what would be removed, with sizes; remove nothing.", ("--dry-run",), False),
     Param("label", "text", "Only the leftovers the replay labelled replay=LABEL made (e.g. farm-<night>).",
           ("--label",)),
     Param("all_users", "flag", "Also the containers other users kept (--keep): by default only yours go.",
           ("--all-users",), False)),
    "housekeeping:gc", ((0, "done"), (2, "bad usage"), (3, "something could not be removed")), read_only=False,
    help="Containers, networks and iptables rules labelled `replay` whose process is no longer running here "
         "(the containers you kept with `replay --keep` among them, those older than --older-than when it is given, "
         "with the images of kept state); "
         "with --images, replay's own images not used within the age and held by no running replay; with "
         "--cache, download-cache entries, replay's BuildKit cache mounts and tool-cache volumes no container "
         "mounts down to the max size. Never "
         "anything replay did not make.",
    examples=("replay gc --dry-run", "replay gc --label farm-20261201T020000Z-4f2a1c"),
    result="answers:Collected")

FARM_RUN = Command(
    "farm run", "Replay every collected capsule (one night), keep the history.",
    (Param("sources", "paths", "Folders (searched recursively), list files (one capsule or folder a line) or "
           "capsules.", metavar="SOURCE..."),
     Param("jobs", "count", "Attempts in parallel (0: the cores).", ("--jobs", "-j"), 0, low=0, high=256),
     Param("ref", "commit", "Also replay at this commit: fixed there?", ("--ref",), metavar="COMMIT"),
     Param("find_fix", "flag", "With --ref: for each capsule fixed at REF, find the commit that fixed it (replay "
           "bisect CAPSULE --commits --fixed-at REF); the report names it.", ("--find-fix",), False),
     c.REPO, c.MIRROR,
     Param("repo_url", "text", "The repository as the report's reproduce-here command names it instead of --repo "
           "(its URL, when --repo is a path only this machine has: a CI job's checkout).", ("--repo-url",),
           metavar="URL"),
     Param("attempts", "count", "Attempts per capsule (K).", ("--attempts", "-n"), DEFAULT_ATTEMPTS, low=1, high=50),
     Param("max_attempts", "count", "Up to this many while they disagree (until the rate is known), and at --ref "
           "until the fix is decided.", ("--max-attempts",), DEFAULT_FARM_MAX_ATTEMPTS, low=1, high=100),
     c.CONFIDENCE, c.timeout("per attempt"), c.MEMORY, c.ENV,
     c.TRUST_KEY,
     Param("require_valid", "flag", "A capsule without a valid signature from a --trust-key is broken (not "
           "replayed).", ("--require-valid",), False),
     Param("resume", "flag", "Continue the last unfinished night (after a kill).", ("--resume",), False),
     Param("executor", "choice", "local (here) or celery (replay worker processes).", ("--executor",),
           choices=("local", "celery"), default_shown="local"),
     Param("broker", "text", "With --executor celery: the Redis broker, redis://HOST:PORT/DB.", ("--broker",),
           envvar="REPLAY_BROKER", mcp=False),
     c.DB,
     Param("gc", "flag", "After the night: `replay gc --images --cache` with its defaults (images unused 14d, caches "
           "down to 20G).", ("--gc",), False)),
    "farm:run", ((0, "every capsule got a verdict (whatever it is) or is broken"),
                 (1, "none got a verdict (all broken)"), (2, "bad usage or no capsule found"),
                 (3, "any could not be judged (infrastructure)")), read_only=False, long=True,
    examples=("replay farm run capsules/ --repo ../app.git",
              "replay farm run capsules/ nightly.txt --repo ../app.git --timeout 10m", "replay farm run --resume"),
    result="replayed:NightRun")

FARM_REPORT = Command(
    "farm report", "The farm's history, attention first: new failures and changed verdicts, flaky, never "
    "reproduced here, then steady.",
    (c.DB,
     Param("html", "path", "Write the report as one self-contained HTML file.", ("--html",), metavar="FILE",
           mcp=False),
     Param("junit", "path", "Write the last night as JUnit XML.", ("--junit",), metavar="FILE", mcp=False),
     Param("since", "count", "Only the last N nights.", ("--since",), low=1, high=100000),
     Param("window", "count", "Reproduction rates, and the runs a capsule is judged on, over its last N nights.",
           ("--window",), 14, low=1, high=100000),
     Param("show_all", "flag", "List the steady capsules too (folded past 20).", ("--all",), False, mcp=False),
     Param("fixed_after", "count", "The least nights of runs that move a capsule's standing: no longer reproducing "
           "only after N nights in a row without the failure whose runs lie below the window's, at the confidence.",
           ("--fixed-after",), DEFAULT_FIXED_AFTER, low=1, high=365)),
    "farm:report", _READ_EXITS, mcp="farm_report",
    mcp_help="Summary counts, what changed since the last night, each capsule's nights.",
    examples=("replay farm report", "replay farm report --html farm.html --junit farm.xml --since 7"),
    result="replayed:FarmView")

FARM_HISTORY = Command(
    "farm history", "One capsule's nights in the farm history.",
    (Param("capsule", "text", "A path as the history records it (as `farm report` prints it), a capsule id prefix, "
           "or a capsule file.", required=True, metavar="CAPSULE"), c.DB),
    "farm:history", ((0, "found"), (1, "the history holds no night for it"), (2, "bad input")), mcp="farm_history",
    mcp_help="exit_code 1 when the history holds none for it.",
    examples=("replay farm history capsules/ci/fetch.json",),
    result="replayed:History")

WORKER = Command(
    "worker", "Run attempts for farms on other machines (Celery over Redis) until stopped.",
    (Param("broker", "text", "The Redis broker: redis://HOST:PORT/DB.", ("--broker",), "redis://127.0.0.1:6379/0",
           envvar="REPLAY_BROKER"),
     Param("concurrency", "count", "Tasks at once (0: the number of cores).", ("--concurrency", "-c"), 0, low=0,
           high=256),
     Param("heartbeat", "number", "Seconds between lease refreshes of each task held.", ("--heartbeat",), 10.0,
           low=0.2, high=3600, envvar="REPLAY_WORKER_HEARTBEAT"),
     Param("lease", "number", "Seconds a task's lease lasts without a heartbeat.", ("--lease",), 30.0, low=1.0,
           high=86400, envvar="REPLAY_WORKER_LEASE"),
     Param("name", "text", "This worker's node name (default replay-PID@HOST).", ("--name",)),
     Param("loglevel", "choice", "Celery's log level.", ("--loglevel",), "INFO",
           choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))),
    "worker:worker", ((0, "stopped"), (2, "bad usage"), (3, "no engine or broker")), read_only=False)

MCP = Command(
    "mcp", "Serve replay's commands as MCP tools over stdio (for coding agents).", (), "mcp:mcp",
    ((0, "the client closed the connection"),),
    help="Each tool answers with its command's --json envelope. Add `replay mcp` to an agent's MCP servers; it "
         "runs until the client closes stdin.",
    examples=("replay mcp", "claude mcp add replay -- replay mcp"))

CAPTURE = Command(
    "capture", "Run CMD here and record it as a twin capsule; exit with CMD's own exit code.",
    (Param("command", "texts", "The command to run and record.", metavar="-- CMD [ARG...]"),
     Param("output", "path", "Where to write the capsule.", ("--output", "-o"), "capsule.json", metavar="FILE"),
     Param("format", "choice", "Capsule format.", ("--format",), "twin", choices=("twin",)),
     Param("only_on_failure", "flag", "Write the capsule only when the command fails.", ("--only-on-failure",),
           False),
     Param("include_env", "texts", "Also record this variable's value, scrubbed, even a session one like HOME "
           "(refused for one whose name says it is a secret); repeatable.", ("--include-env",), [], metavar="NAME"),
     Param("salt", "text", "Record a salted hash of each value that is not recorded (compare with `replay --salt`).",
           ("--salt",), envvar="REPLAY_SALT")),
    "capture:capture", ((0, "CMD's own exit code (a signal: 128+N)"), (2, "bad usage, before CMD runs"),
                        (3, "the capsule could not be written and CMD passed")),
    read_only=False, stop_at_first_word=True,
    examples=("replay capture -o capsule.json -- npm test",
              "replay capture --only-on-failure -o capsule.json -- pytest -x",
              "TZ=UTC replay capture -o utc.json -- npm test; replay diff capsule.json utc.json"),
    result="answers:CaptureAnswer")

_GH_REPO = Param("repo", "text", "OWNER/REPO (GITHUB_REPOSITORY in Actions).", ("--repo",), required=True)
_PR = Param("pr", "count", "The pull request's number.", ("--pr",), required=True, low=1, high=10**9)

CI_FIND = Command(
    "ci find", "Save the capsules attached to the issues a PR closes; print their paths, one a line.",
    (_GH_REPO, _PR, Param("out", "path", "Where to save the capsules.", ("--out",), "capsules", metavar="DIR")),
    "ci:find", ((0, "done"), (2, "bad usage"), (3, "GitHub did not answer")), read_only=False)
CI_POST = Command(
    "ci post", "Create or update the PR's comment for each comment FILE (matched by its hidden marker).",
    (Param("files", "paths", "Comments `replay CAPSULE --comment` wrote.", metavar="FILE...", required=True),
     _GH_REPO, _PR),
    "ci:post", ((0, "done"), (2, "bad usage"), (3, "GitHub did not answer")), read_only=False)
CI_IMAGE = Command(
    "ci image", "Build replay's runner image, trusting the CA certificates replay's own builds trust.",
    (Param("tag", "text", "The image's name.", ("--tag", "-t"), "replay:latest"),
     Param("base", "text", "FROM this image (default: the official Python image, else the local base).", ("--base",)),
     Param("context_only", "path", "Only write the build context to DIR (then `docker build DIR`).",
           ("--context-only",), metavar="DIR")),
    "ci:image", ((0, "built"), (2, "bad usage"), (3, "the build failed")), read_only=False)
CI_SUMMARY = Command(
    "ci summary", "The job's summary as Markdown: the night's verdict sentence and the capsule's fidelity.",
    (Param("capsule", "path", "The capsule the job replayed.", metavar="CAPSULE", required=True),
     Param("farm_run", "path", "`replay farm run --json`'s answer.", metavar="FARM_RUN_JSON", required=True),
     Param("repo", "text", "The --repo the replay was given.", ("--repo",)),
     Param("out", "path", "Write the summary here (default: append to $GITHUB_STEP_SUMMARY).", ("--out",),
           metavar="FILE")),
    "ci:summary", _READ_EXITS, read_only=False)

HELP = Command(
    "help", "Show a command's help or a topic; without one, the commands and the topics.",
    (Param("command", "texts", "A command (farm run: two words) or a topic.", metavar="COMMAND|TOPIC",
           suggest="main:help_words"),),
    "main:help_command", _READ_EXITS,
    examples=("replay help run", "replay help farm run", "replay help verdicts"))
VERSION = Command("version", "Print replay's version (engine and SDK versions: replay doctor).", (),
                  "main:version_command", examples=("replay version", "replay version --json"),
    result="answers:Versioned")
COMPLETION = Command(
    "completion", "Print the tab-completion script for a shell (source it from your shell's rc file).",
    (Param("shell", "choice", "The shell.", choices=("bash", "zsh", "fish"), required=True, metavar="SHELL"),),
    "main:completion_command", _READ_EXITS,
    examples=("replay completion bash > ~/.local/share/bash-completion/completions/replay",
              "replay completion zsh > ~/.zfunc/_replay"))

COMMANDS: tuple[Command, ...] = (RUN, INSPECT, DIFF, VERIFY, SIGNATURE, RENDER, SHELL, BISECT, PIN, DOCTOR, GC, FARM_RUN,
                                 FARM_REPORT, FARM_HISTORY, WORKER, MCP, CAPTURE, CI_FIND, CI_POST, CI_IMAGE,
                                 CI_SUMMARY, HELP, VERSION, COMPLETION)
BY_NAME = MappingProxyType({cmd.name: cmd for cmd in COMMANDS})
GROUPS = MappingProxyType({
    "farm": "Replay every collected capsule each night, keep the history, say what changed.",
    "ci": "What the CI jobs call: a PR's capsules and comments (GitHub), the runner image, the job's summary.",
})


def top_words() -> tuple[str, ...]:
    """The first words `replay` knows: commands and groups."""
    return tuple(dict.fromkeys(cmd.words[0] for cmd in COMMANDS))


def tools() -> tuple[Command, ...]:
    """The commands offered as MCP tools."""
    return tuple(cmd for cmd in COMMANDS if cmd.mcp)

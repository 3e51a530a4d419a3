"""What a Go image compiles ahead, read off the recorded command: the standard library, and the
packages a recorded `go test` (or `go build`, `go run`, `go vet`, `go install`) names, with the
flags and variables that change what is compiled, so that the attempts find them in Go's
content-addressed build cache instead of compiling them cold.

Compile only: `go test` is warmed with `-exec /bin/true` (its test binaries are built, vetted and
linked, never run) and `-count=1` (no result is cached); `go build -o /dev/null` for the others.
The command's arguments are someone else's: a pattern or flag that is not plainly one
(validate.py's "go package" and "go flag" rules) is left out, and only stays cold.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Literal

from .plan import EnvSetting, Fidelity, GoWarm
from .validate import is_valid

# The flags of `go test`/`go build` that take a value (the next argument unless given as -f=v):
# needed to tell a flag's value from a package pattern.
_VALUED = frozenset({
    "C", "p", "asmflags", "buildmode", "buildvcs", "compiler", "gccgoflags", "gcflags", "installsuffix",
    "ldflags", "mod", "modfile", "overlay", "pgo", "pkgdir", "tags", "toolexec", "covermode", "coverpkg",
    "o", "exec", "vet", "bench", "benchtime", "blockprofile", "blockprofilerate", "count", "coverprofile",
    "cpu", "cpuprofile", "fuzz", "fuzzminimizetime", "fuzztime", "list", "memprofile", "memprofilerate",
    "mutexprofile", "mutexprofilefraction", "outputdir", "parallel", "run", "skip", "shuffle", "timeout",
    "trace",
})
# Those that change what is compiled (the build cache's keys): carried into the warm-up.
_COMPILE = frozenset({"race", "msan", "asan", "cover", "covermode", "coverpkg", "tags", "gcflags", "trimpath",
                      "mod", "buildvcs", "vet"})
# Recorded variables that change what is compiled, given to the warm-up as the run gets them.
COMPILE_ENV = ("GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOAMD64", "GOARCH", "GOOS", "GO111MODULE", "GOWORK")
# Where the image keeps Go's build cache, and where the attempts' tool-cache volume is mounted
# unless the plan sets its own GOCACHE (replay/toolcache.py).
GO_CACHE = "/opt/replay/toolcache/go-build"
_TEST_ONLY = ("-vet",)
_MODES: dict[str, Literal["test", "build"]] = {"test": "test", "build": "build", "vet": "build", "install": "build",
                                               "run": "build"}


def go_warm(argv: tuple[str, ...], env: Mapping[str, EnvSetting]) -> GoWarm:
    """What to compile ahead for this command (the standard library at least)."""
    wanted = tuple((n, s.value) for n, s in sorted(env.items())
                   if n in COMPILE_ENV and s.state == "set" and is_valid("go env value", s.value))
    if len(argv) < 2 or PurePosixPath(argv[0]).name != "go" or argv[1] not in _MODES:
        return GoWarm("std", (), (), wanted)
    packages, flags, ok = _split(argv[1], argv[2:])
    if not ok or packages is None:  # -C DIR, -o, -exec: not the command as the warm-up would run it
        return GoWarm("std", (), (), wanted)
    return GoWarm(_MODES[argv[1]], packages or (".",), flags, wanted)


def _split(verb: str, args: tuple[str, ...]) -> tuple[tuple[str, ...] | None, tuple[str, ...], bool]:
    """(package patterns, compile flags as -name=value, whether the warm-up can follow the command).
    The patterns are the first run of non-flag arguments: after them, a flag ends the list (`go test
    ./... -v x`: x is the test binary's), and `go run` takes one (the rest are the program's). None:
    patterns were named, and none of them is plainly one (nothing but the standard library is warmed)."""
    packages: list[str] = []
    flags: list[str] = []
    closed = named = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-args", "--"):
            break
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.lstrip("-").partition("=")
            if name in _VALUED and not eq:
                value, i = (args[i + 1] if i + 1 < len(args) else ""), i + 1
            if name in ("C", "o", "exec", "toolexec", "overlay", "modfile", "pkgdir"):
                return (), (), False
            shaped = f"-{name}={value}" if (eq or name in _VALUED) else f"-{name}"
            if name in _COMPILE and is_valid("go flag", shaped):
                flags.append(shaped)
            closed = bool(packages)
        elif closed or (verb == "run" and packages):
            break
        else:
            named = True
            if is_valid("go package", arg):
                packages.append(arg)
        i += 1
    return (None if named and not packages else tuple(packages)), tuple(flags), True


def warm_rows(plan_warm: GoWarm | None, argv: tuple[str, ...], env: Mapping[str, EnvSetting]) -> tuple[Fidelity, ...]:
    """The fidelity rows a Go plan gets: the cache the image holds (the build replaces it with what
    it really compiled), and `-count=1` when the recorded `go test` did not ask for it."""
    if plan_warm is None:
        return ()
    what = "the standard library" if plan_warm.mode == "std" else \
        f"the standard library and {' '.join(plan_warm.packages)} ({'with their tests' if plan_warm.mode == 'test' else 'go build'})"
    rows = [Fidelity("cache Go build", "not recorded", f"warm: {what} compiled in the image", "exact",
                     "content-addressed: one cache per toolchain for every attempt; it changes how long, not what")]
    flags = env.get("GOFLAGS")
    asked = any(a.startswith(("-count", "--count")) for a in argv[2:]) or \
        (flags is not None and "-count" in flags.value)
    if plan_warm.mode == "test" and not asked:
        rows.append(Fidelity("go test results", "taken from Go's test cache when unchanged", "never cached: -count=1",
                             "approximated", "every attempt runs the tests (GOFLAGS=-count=1): a cached result "
                             "would answer for the test"))
    return tuple(rows)


def template_vars(warm: GoWarm | None) -> dict[str, object] | None:
    """The Dockerfile's view of the warm-up (render.py): argument lists, each a JSON-form RUN's."""
    if warm is None:
        return None
    build_flags = [f for f in warm.flags if not f.startswith(_TEST_ONLY)]
    command = ["go", "test", "-count=1", "-exec", "/bin/true", *warm.flags] if warm.mode == "test" else \
        ["go", "build", "-o", "/dev/null", *build_flags]
    # the module proxy is as unreachable as in the attempts (their network is the recorded one, at most)
    return {"mode": warm.mode, "cache": GO_CACHE, "env": ["env", "GOPROXY=off", *(f"{n}={v}" for n, v in warm.env)],
            "build_flags": build_flags, "command": command, "packages": list(warm.packages)}


WARM_DIR = "/opt/replay/warm"  # templates/scripts/go-warm.sh writes what came of each step here


def built_rows(steps: Mapping[str, str]) -> tuple[Fidelity, ...]:
    """The "cache Go build" row as the build found it (go-warm.sh's files: step name -> its report:
    "ok|failed SECONDSs PACKAGES", then what did not compile), in place of the plan's."""
    if "std" not in steps:
        return ()
    said, cold = [], []
    for name, what in (("std", "the standard library"), ("packages", "packages")):
        head, *failed = steps.get(name, "").splitlines() or [""]
        status, secs, count = (head.split() + ["", "", ""])[:3]
        if not status:
            continue
        counted = f"{count} {what if count != '1' else 'package'}" if name == "packages" and count.isdigit() else what
        said.append(f"{counted} ({secs})" if status == "ok" else f"{counted} in part ({secs})")
        cold += [f.strip() for f in failed if f.strip()] or ([what] if status != "ok" else [])
    why = "content-addressed: one cache per toolchain for every attempt; it changes how long, not what"
    if cold:
        why += f"; did not compile (stays cold): {', '.join(cold[:5])}"
    return (Fidelity("cache Go build", "not recorded", f"warm: {' and '.join(said)} compiled in the image", "exact",
                     why),)

"""The capsule's `env`, `locale` and `redaction` by twin's rules (rules version 2).

Every variable of the environment is listed by name, except session and launcher noise.
twin's allowlisted variables are always listed, as absent when unset (unset-versus-set is a
difference worth bisecting), with their values. Values are also written for a documented set
of variables that decide how a program behaves in CI and say nothing secret or about the host
(COLUMNS, the CI providers' own flags, colour and Python/Go/Rust switches, any LC_*), and for
those named with --include-env (listed even when they are session noise, HOME; their paths kept
as they are), all scrubbed; a variable whose name says it is a secret never
has its value written (capture refuses to be asked). With a salt, every other set variable gets
the first 32 hex characters of HMAC-SHA-256(salt, value) instead, comparable only with hashes
made with the same salt.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..secretrules import secret_name
from .scrub import Scrubber

# Always listed, with their values (twin's allowlist, rules version 2, in its order): absent when unset.
ALWAYS_LISTED = (
    "CI", "TERM", "FORCE_COLOR", "NO_COLOR", "NODE_ENV", "NODE_OPTIONS", "TZ", "LANG", "LANGUAGE", "LC_ALL",
    "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING", "PYTHONUTF8", "GOFLAGS", "CGO_ENABLED", "RUST_BACKTRACE",
)
# Values also written when set: what makes a program behave differently in CI (the terminal's
# width, the providers' "am I in CI" flags that pytest, jest and ci-info read, colour switches,
# language runtimes' switches). None says anything secret or about the host; paths (PATH,
# JAVA_HOME...), proxies and URLs are not among them.
CI_PROVIDERS = (
    "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "TRAVIS", "APPVEYOR", "TF_BUILD", "DRONE", "SEMAPHORE",
    "TEAMCITY_VERSION", "CIRRUS_CI", "BITRISE_IO", "BITBUCKET_BUILD_NUMBER", "CODEBUILD_BUILD_NUMBER", "NETLIFY",
    "VERCEL", "WOODPECKER", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID", "CI_NAME", "RUNNER_OS",
    "RUNNER_ARCH",
)
VALUES = frozenset({
    *ALWAYS_LISTED, *CI_PROVIDERS, "COLUMNS", "LINES", "CLICOLOR", "CLICOLOR_FORCE", "PY_COLORS",
    "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NODE_TLS_REJECT_UNAUTHORIZED", "PYTHONWARNINGS", "PYTHONOPTIMIZE",
    "PYTHONDEVMODE", "PYTHONFAULTHANDLER", "PYTEST_ADDOPTS", "GOOS", "GOARCH", "GO111MODULE", "GOEXPERIMENT",
    "GODEBUG", "RUSTFLAGS", "CARGO_TERM_COLOR",
})
VALUE_PREFIXES = ("LC_",)  # any locale category
# Session and launcher noise: who is logged in where, the terminal emulator, the desktop, the
# package manager that launched us. Never a fact about the run.
_NOISE_NAMES = frozenset({
    "HOME", "USER", "USERNAME", "LOGNAME", "PWD", "OLDPWD", "SHLVL", "SHELL", "_", "COLORTERM",
    "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TERM_SESSION_ID", "DISPLAY", "WINDOWID", "LS_COLORS", "LSCOLORS",
    "MAIL", "HOSTNAME", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "HISTFILE", "HISTSIZE", "HISTFILESIZE",
    "HISTCONTROL", "TMUX", "TMUX_PANE", "STY", "MOTD_SHOWN", "LESSOPEN", "LESSCLOSE",
    "EDITOR", "VISUAL", "PAGER", "MANPATH", "INFOPATH", "INIT_CWD", "DESKTOP_SESSION", "SESSION_MANAGER",
    "WAYLAND_DISPLAY", "XAUTHORITY", "OLDPATH", "PYTEST_CURRENT_TEST",
})
_NOISE_PREFIXES = ("SSH_", "XDG_", "npm_", "NPM_CONFIG_", "DBUS_", "GPG_", "GNOME_", "KDE_", "KONSOLE_", "VTE_",
                   "ITERM_", "SUDO_", "WT_", "VSCODE_", "GIO_", "QT_", "GTK_", "LC_TERMINAL", "WINDOW", "TMUX_",
                   "__CF", "__INTELLIJ", "REPLAY_CAPTURE_")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class EnvOptions:
    include: Sequence[str] = ()  # --include-env: also record these values (scrubbed)
    salt: str | None = None  # --salt: hash the values that are not recorded


@dataclass
class EnvResult:
    facts: dict[str, dict[str, str]] = field(default_factory=dict)
    values_included: list[str] = field(default_factory=list)


def is_noise(name: str) -> bool:
    return name in _NOISE_NAMES or name.startswith(_NOISE_PREFIXES)


def has_value(name: str) -> bool:
    """Is this one of the variables whose value capture records unasked?"""
    return name in VALUES or (name.startswith(VALUE_PREFIXES) and not is_noise(name))


def env_facts(environ: Mapping[str, str], opts: EnvOptions, scrub: Scrubber) -> EnvResult:
    result = EnvResult()
    asked = frozenset(opts.include)
    # A name asked for by --include-env is listed even when it is session noise (HOME): the
    # request says it is a fact about this run.
    names = list(ALWAYS_LISTED) + sorted(n for n in environ if n not in ALWAYS_LISTED
                                         and (not is_noise(n) or n in asked))
    for name in names:
        if not _ENV_NAME.fullmatch(name):
            continue
        value = environ.get(name)
        if value is None:
            result.facts[name] = {"state": "absent"}
            continue
        fact = {"state": "set" if value else "empty"}
        if value and (has_value(name) or name in asked) and not secret_name(name):
            # An asked-for value keeps its paths: HOME's own value as `~` would say nothing.
            fact["value"] = scrub.text(value, paths=name not in asked)
            result.values_included.append(name)
        elif value and opts.salt is not None:
            fact["hash"] = hmac.new(opts.salt.encode(), value.encode("utf-8", "surrogateescape"),
                                    hashlib.sha256).hexdigest()[:32]
        result.facts[name] = fact
    result.values_included.sort()
    return result


def time_zone(environ: Mapping[str, str], etc: Path = Path("/etc")) -> str | None:
    """The IANA zone a process here resolves: TZ when it names one, else the system's; None when
    neither says (never a guess)."""
    tz = environ.get("TZ")
    if tz is not None:
        name = tz[1:] if tz.startswith(":") else tz
        return name if _is_zone(name) else None
    localtime = etc / "localtime"
    if localtime.is_symlink():
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            name = target.split("zoneinfo/", 1)[1]
            name = name.removeprefix("posix/").removeprefix("right/")
            if _is_zone(name):
                return name
    try:
        name = (etc / "timezone").read_text().strip()
    except OSError:
        return None
    return name if _is_zone(name) else None


def _is_zone(name: str) -> bool:
    if not name or name.startswith("/") or ".." in name:
        return False
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


_POSIX_LOCALE = re.compile(r"(?P<lang>[A-Za-z]{2,3})(?:_(?P<region>[A-Za-z]{2}|[0-9]{3}))?(?:\.[^@]*)?(?:@.*)?")


def locale_tag(environ: Mapping[str, str]) -> str | None:
    """The BCP 47 locale ICU resolves (Node's Intl): from LC_ALL, LC_MESSAGES, LANG; the C and
    POSIX locales (and none) resolve to en-US. None for a value ICU would not read."""
    raw = next((environ[n] for n in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(n)), "")
    if raw in ("", "C", "POSIX") or raw.startswith("C."):
        return "en-US"
    m = _POSIX_LOCALE.fullmatch(raw)
    if m is None:
        return None
    lang, region = m.group("lang").lower(), m.group("region")
    return f"{lang}-{region.upper()}" if region else lang


def redaction(result: EnvResult, scrub: Scrubber, rules_version: int, salted: bool) -> dict[str, Any]:
    """twin's four members, and `diffOmitted`: the files whose change was left out of the diff
    (binary: it cannot be scrubbed). twin's readers ignore a member they do not know."""
    return {"rulesVersion": rules_version, "valuesIncluded": list(result.values_included),
            "hashedValues": salted, "scrubbed": scrub.scrubbed(), "diffOmitted": list(scrub.omitted)}

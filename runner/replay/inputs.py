"""What a command that replays (run, render, shell, bisect, farm run) makes of the options it shares:
checked (a bad one is a usage error naming it, exit 2, before any work), then the stage's own values."""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

# The stages (planning, opening a capsule, the mirror rules) are imported where an option is
# used: `replay farm history` should not pay for loading the builder.
if TYPE_CHECKING:
    from ..build.plan import PlanOptions
    from ..capsules.trust import Trust


def use_mirrors(items: list[str] | None) -> None:
    """--mirror PREFIX=PATH_OR_URL, checked (exit 2, one line), then in force with REPLAY_MIRRORS's
    for this command (mirrors.py): the fetch of every capsule's source asks the rules."""
    from ..build.sources import mirrors

    mirrors.use(mirrors.parse_rules(items or ()))  # UsageError: the CLI's edge makes it one line, exit 2
    mirrors.from_env()  # a bad REPLAY_MIRRORS file is a usage error before any work too


def trust(v: Mapping[str, Any]) -> Trust:
    """--trust-key, --require-valid, --allow-unverified: checked before any capsule is read."""
    from ..capsules.trust import Trust

    return Trust(tuple(v["trust_key"]), v.get("require_valid", False), v.get("allow_unverified", False))


def write_text(path: Path, text: str) -> None:
    """A report file, written whole or not at all (a reader never sees half of one)."""
    part = path.with_name(f".{path.name}.part")
    try:
        part.write_text(text, encoding="utf-8")
        part.replace(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be written ({exc.strerror})") from exc


def parse_env(items: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise UsageError(f"--env {item!r}: expected NAME=VALUE")
        out.append((name, value))
    return tuple(out)


def check_repo(repo: str | None) -> None:
    if repo is not None and not re.match(r"^(https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:", repo) \
            and not Path(repo).expanduser().exists():
        raise UsageError(f"--repo {repo}: no such clone, bundle or URL")


def plan_options(v: Mapping[str, Any]) -> PlanOptions:
    """The plan options of a command that declares the build options (commands/common.BUILD): checked,
    its mirror rules in force."""
    from ..build.plan import PlanOptions
    from ..capsules.opening import open_capsule
    from ..capsules.trust import Trust

    use_mirrors(v.get("mirror"))
    patch, source, http = v.get("patch"), v.get("source"), v.get("http")
    patch_text = _read_patch(patch) if patch is not None else ""
    if source is not None and not source.is_dir():
        raise UsageError(f"--source {source}: not a directory")
    if source is not None and (v.get("repo") or v.get("ref") or patch):
        raise UsageError("--source replaces the recorded commit: it does not go with --repo, --ref or --patch")
    check_repo(v.get("repo"))
    instance = None
    if http is not None:
        instance = open_capsule(http, Trust().showing()).capsule
        if instance.provenance.format.value != "codeinstances":
            raise UsageError(f"--http {http}: not a CodeInstances instance ({instance.provenance.format.value})")
    return PlanOptions(env_overrides=parse_env(v.get("env") or []), salt=v.get("salt"),
                       all_runtimes=v.get("all_runtimes", False), pin=not v.get("no_pin", False), repo=v.get("repo"),
                       ref=v.get("ref"), patch=patch_text, source_dir=str(source) if source else None, http=instance,
                       http_ignore=tuple(v.get("http_ignore") or ()), seeds=not v.get("no_seeds", False))


def stopping(v: Mapping[str, Any]) -> dict[str, Any]:
    """ReplayOptions' stopping fields; --attempts N (exactly N) does not go with --max-attempts or --budget."""
    from .defaults import DEFAULT_MAX_ATTEMPTS

    if v.get("attempts") is not None and (v.get("max_attempts") is not None or v.get("budget") is not None):
        raise UsageError("--attempts N runs exactly N attempts: it does not go with --max-attempts or --budget")
    return {"attempts": v.get("attempts"), "max_attempts": v.get("max_attempts") or DEFAULT_MAX_ATTEMPTS,
            "budget": v.get("budget"), "confidence": v["confidence"]}


def carried(v: Mapping[str, Any]) -> list[str]:
    """The options a printed next command needs to work as printed: --repo and --mirror as given."""
    words = [f"--repo={v['repo']}"] if v.get("repo") else []
    return words + [f"--mirror={rule}" for rule in v.get("mirror") or ()]


def _read_patch(patch: str | Path) -> str:
    """--patch FILE, or the diff's text itself (`--patch "$(git -C DIR diff)"`: the shell drops its last newline)."""
    text = str(patch)
    if text.startswith(("diff --git ", "--- ", "Index: ")) or "\n+++ " in text:
        return text if text.endswith("\n") else text + "\n"
    patch = Path(text)
    try:
        return patch.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--patch {patch}: {exc.strerror if isinstance(exc, OSError) else 'not a text file'}") from exc

"""What a Python lockfile tells the build beyond its hash: pipenv's development packages.

`pipenv install --deploy` installs the lock's `default` section only; a project that
keeps pytest under `[dev-packages]` (pipenv's convention) ran its recorded command with the
`develop` section installed too. Read on the host from the build context (the lockfile as the
build gets it), never executed: when the capsule records a package that only `develop` holds
as installed, the build adds `--dev`.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from .plan import Plan

MAX_LOCK_BYTES = 32 * 1024 * 1024


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def develop_only(lockfile: Path) -> frozenset[str]:
    """The PEP 503 names of the Pipfile.lock's `develop` section that `default` lacks (none when
    the file cannot be read as one: the build's own install then says what is wrong)."""
    try:
        if lockfile.stat().st_size > MAX_LOCK_BYTES:
            return frozenset()
        doc = json.loads(lockfile.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    if not isinstance(doc, dict):
        return frozenset()
    default, develop = (_names(doc.get(k)) for k in ("default", "develop"))
    return frozenset(develop - default)


def _names(section: object) -> set[str]:
    return {_normal(str(name)) for name in section} if isinstance(section, dict) else set()


def pipenv_dev(plan: Plan, pydeps: Path) -> tuple[str, ...]:
    """The recorded packages only the lock's `develop` section installs (sorted): `--dev` when any."""
    lock = plan.python_lock
    if lock is None or lock.manager != "pipenv" or plan.runtime("python") is None:
        return ()
    return tuple(sorted(develop_only(pydeps / lock.path) & set(plan.python_pins)))


def pipenv_dev_note(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (f"pipenv install --dev: the capsule records {shown} as installed, which only Pipfile.lock's "
            "develop section holds")

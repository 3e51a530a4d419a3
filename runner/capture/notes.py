"""The lines capture says on stderr about the capsule it wrote: what was redacted, and (after
a failure) which variables were recorded without their value and how to include one."""
from __future__ import annotations

from typing import Any

from ..secretrules import secret_name
from ..textsafe import escaped

NAMES_SHOWN = 12  # a CI job sets dozens: the line stays one line


def redaction_line(doc: dict[str, Any]) -> str:
    """`replay capture: redacted 3 (env-value 2, github-token 1); left out of the diff: 1 binary file (logo.png)`."""
    red = doc["redaction"]
    counts: dict[str, int] = red["scrubbed"]
    said = (f"redacted {sum(counts.values())} ({', '.join(f'{k} {n}' for k, n in counts.items())})" if counts
            else "redacted nothing")
    omitted: list[str] = red.get("diffOmitted", [])
    if omitted:
        files = "file" if len(omitted) == 1 else "files"
        said += f"; left out of the diff: {len(omitted)} binary {files} ({_names(omitted)})"
    return f"replay capture: {said}"


def cache_warning(doc: dict[str, Any]) -> str | None:
    """The warning for an outcome a tool's result cache gave (None when a run gave it)."""
    if not doc or doc["command"].get("resultCached") != "go test":
        return None
    return ("replay capture: warning: go test answered from its test cache (`ok ... (cached)`): that result is an "
            "earlier run's, whatever TZ and most variables are now; recorded as `go test result: cached`; "
            "`go test -count=1` records a real run")


def env_hint(doc: dict[str, Any]) -> str | None:
    """The variables set here whose value the capsule does not hold (None when there are none),
    and what to do about one that matters: `replay --env NAME=VALUE` now, `--include-env` next time."""
    env: dict[str, dict[str, str]] = doc["env"]
    bare = [n for n, f in env.items() if f["state"] == "set" and "value" not in f]
    names = sorted(n for n in bare if not secret_name(n))
    if not names:
        return None
    secrets = len(bare) - len(names)
    also = f" ({secrets} more named as {'a secret' if secrets == 1 else 'secrets'}, never recorded)" if secrets else ""
    return (f"replay capture: recorded without a value: {_names(names)}{also}; if one decides the failure, "
            f"record it with `replay capture --include-env NAME`, or give it to a replay with `--env NAME=VALUE`")


def _names(names: list[str]) -> str:
    shown = ", ".join(escaped(n) for n in names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")

"""`replay capture`'s answer: the closing lines on stderr (what was redacted, the variables recorded
without a value, the outcome and where the capsule went) and its --json result."""
from __future__ import annotations

from typing import Any

from ..capture import Captured, env_hint, redaction_line
from ..secretrules import secret_name
from ..textsafe import shown


def closing_lines(captured: Captured) -> list[str]:
    result = captured.result
    ending = (f"fail: {result.signal}" if result.signal else
              f"fail: exit {result.exit_code}" if result.failed else "pass")
    if captured.written is None:
        return [f"replay capture: {ending}; no capsule written (--only-on-failure)"]
    lines = [redaction_line(captured.doc)]
    hint = env_hint(captured.doc) if result.failed else None
    if hint is not None:
        lines.append(hint)
    said = f", signature {captured.doc['command']['failure']['signature']}" if result.failed else ""
    return [*lines, f"replay capture: {ending}{said}; capsule written to {shown(str(captured.written))}"]


def capture_data(captured: Captured) -> dict[str, Any]:
    result, doc = captured.result, captured.doc
    red = doc.get("redaction") or {}
    env: dict[str, dict[str, str]] = doc.get("env") or {}
    return {"written": None if captured.written is None else str(captured.written), "failed": result.failed,
            "exit_code": result.exit_code, "signal": result.signal,
            "signature": doc["command"]["failure"]["signature"] if result.failed and doc else None,
            "redacted": dict(red.get("scrubbed") or {}), "diff_omitted": list(red.get("diffOmitted") or []),
            "values_not_recorded": sorted(n for n, f in env.items()
                                          if f.get("state") == "set" and "value" not in f and not secret_name(n))}

"""`replay pin`'s text: the pinned command and its rate, or each axis tried with its rate."""
from __future__ import annotations

from rich.console import Console

from ..pinning.pinsearch import PinResult
from ..textsafe import escaped
from ..units import format_duration


def show_pin(result: PinResult, out: Console) -> None:
    def say(text: str) -> None:
        out.print(text, markup=False, highlight=False)  # capsule text: never markup

    if result.pinned and result.rate is not None:
        shown = " ".join(f"{k}={v}" for k, v in result.settings.items()) or "the recorded settings (nothing to add)"
        say(f"PINNED  {escaped(result.capsule)}: {shown}")
        say(f"  the recorded failure came back in {result.rate.failed} of {result.rate.runs} runs "
            f"({result.rate.span()})")
        say(f"  command: {escaped(result.command)}")
        say(f"  replay:  {escaped(result.rerun)}" + ("" if result.written else "   (-o FILE writes the pinned capsule)"))
    else:
        say(f"NOT PINNED  {escaped(result.capsule)}: no setting tried made the recorded failure come back every time"
            + (" (the budget ended the search)" if result.budget_ended else ""))
    say("axes tried (each setting's runs pooled):")
    for axis in result.axes:
        say(f"  {axis.axis:<15} {axis.settings} setting(s)  failed {axis.rate.failed} of {axis.rate.runs}  "
            f"{axis.rate.span()}")
    say(f"{result.runs} runs in {format_duration(round(result.wall_s))}")

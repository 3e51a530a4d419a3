"""`replay pin CAPSULE` (the use case: pinning/pinrun.py; the text: report/pinned.py)."""
from ..commands.spec import Args
from ..pinning.pinrun import pin_command
from ..report.pinned import show_pin
from . import console


def pin(a: Args) -> int:
    result = pin_command(a.values, console.err, quiet=a.quiet or a.json)
    console.print_result("pin", result.exit_code, result.data()) if a.json else show_pin(result, console.out)
    return result.exit_code

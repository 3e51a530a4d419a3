"""`replay doctor`: the engine, the builder, base images, cache, registries and settings."""
from __future__ import annotations

from ..commands.spec import Args
from ..machine.doctor import diagnose
from ..report.doctor import doctor_data, show_doctor
from . import console


def doctor(a: Args) -> int:
    d = diagnose()
    problem = d.problem()
    if not a.json:
        show_doctor(d, console.out)
    elif problem is None:  # as every command: on exit 3 no result, the error names each failed check and its fix
        console.print_result("doctor", d.exit_code, doctor_data(d))
    if problem is not None:
        raise problem
    return d.exit_code

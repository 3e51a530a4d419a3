"""`replay doctor`: the engine, the builder, base images, cache, registries and settings."""
from __future__ import annotations

from ..commands.answers import Diagnosed
from ..commands.arguments import DoctorArgs
from ..machine.doctor import diagnose


def doctor(a: DoctorArgs) -> Diagnosed:
    return Diagnosed(diagnose())

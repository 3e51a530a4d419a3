"""CPython at the recorded version: only the versions Debian suites ship are
obtainable here, so other versions are approximated and reported as such."""
from __future__ import annotations

from ....config import Settings
from ...plan import BaseImage, Fidelity, Runtime
from .versions import vkey


def resolve(recorded: str, base: BaseImage, settings: Settings) -> tuple[Runtime | None, Fidelity]:
    exact = recorded == base.python
    if exact:
        why = f"{base.label}'s python3"
    elif vkey(recorded)[:2] == vkey(base.python)[:2]:
        why = f"CPython {recorded} is not obtainable here; {base.label} ships {base.python} (same minor)"
    else:
        why = f"CPython {recorded} is not obtainable here; {base.label} ships {base.python} (other minor)"
    return (Runtime("python", recorded, base.python, "debian", exact, why),
            Fidelity("runtime python", recorded, base.python, "exact" if exact else "approximated", why))

"""Python package managers (pip, uv, poetry, pipenv) at the recorded version, from PyPI.

pip is upgraded in place in the image's /opt/venv; the others get a venv of their own
under /opt/pm (their dependencies stay out of the project's environment, which must
hold what the recorded run had and nothing else).
"""
from __future__ import annotations

from ....config import Settings
from ....errors import SourceUnavailable
from ...plan import Fidelity, Tool
from . import pypi
from .versions import is_release, nearest, vkey

PYTHON_TOOLS = ("pip", "uv", "poetry", "pipenv")


def resolve(name: str, recorded: str | None, settings: Settings) -> tuple[Tool | None, Fidelity]:
    """The release of `name` to install: the recorded one when the index has it, else the
    nearest (approximated); with no recorded version, the newest (approximated)."""
    fact = f"package manager {name}"
    if recorded is None and name == "pip":
        return None, Fidelity(fact, "not recorded", "the distro's pip", "approximated",
                              "the capsule records no pip version; the image's own pip is kept")
    try:
        available = pypi.versions(settings, name)
    except SourceUnavailable as exc:
        return None, Fidelity(fact, recorded or "not recorded", "-", "not applied", str(exc))
    if recorded is None:
        releases = [v for v in available if is_release(v)]
        if not releases:
            return None, Fidelity(fact, "not recorded", "-", "not applied", f"the index offers no release of {name}")
        newest = max(releases, key=vkey)
        return Tool(name, newest, "pypi"), Fidelity(fact, "not recorded", newest, "approximated",
                                                    "the capsule records no version; newest release")
    chosen = nearest(recorded, available)
    if chosen is None:
        return None, Fidelity(fact, recorded, "-", "not applied", f"the Python package index offers no {name} near {recorded}")
    exact = chosen == recorded
    return Tool(name, chosen, "pypi"), Fidelity(fact, recorded, chosen, "exact" if exact else "approximated",
                                                "" if exact else f"{name} {recorded} is not on the index; nearest release")

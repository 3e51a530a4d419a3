"""`replay verify CAPSULE`: integrity and seal of a capsule; the answer first, then every problem."""
from __future__ import annotations

import shlex
from pathlib import Path

from ..build.precheck import CONTENT_CHECKS
from ..capsules.opening import verification
from ..capsules.trust import check_trust_key
from ..commands.answers import Verified
from ..commands.arguments import VerifyArgs
from ..errors import UsageError


def _twin_fix_hint(capsule: str, patch: Path | None, ref: str | None) -> str:
    """twin's `verify --patch F` checks a fix; here that is `replay CAPSULE --patch F`."""
    option = f"--patch {patch}" if patch is not None else f"--ref {ref}"
    return (f"verify {option}: replay verify checks a capsule's integrity; to check a fix (twin's verify), "
            f"run `replay {shlex.quote(str(capsule))} {option}`")


def verify(a: VerifyArgs) -> Verified:
    if a.patch is not None or a.ref is not None:
        raise UsageError(_twin_fix_hint(a.capsule, a.patch, a.ref))
    keys = tuple(check_trust_key(k) for k in a.trust_key)
    # named as given; refuses nothing
    return Verified(verification(a.capsule, keys, content_checks=CONTENT_CHECKS), keys_given=bool(keys))

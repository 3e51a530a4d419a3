"""What a capsule must show before replay believes it: the trusted keys and the policy.

One value, checked once when it is made (a key path that is no key, `--require-valid`
with nothing to require), and one rule for every command that replays or builds (replay,
farm, bisect, render, shell; applied by capsules/opening.py): a capsule that does not
verify is refused unless `allow_unverified`; `require_valid` also wants a valid signature
from one of `keys`. The commands that show (inspect, diff, verify) refuse nothing.
"""
from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import CapsuleRefused, PathError, UsageError
from .verification import VerifyResult

_MAX_KEY_BYTES = 64 * 1024  # a PEM public key is a few hundred bytes


@dataclass(frozen=True)
class Trust:
    keys: tuple[Path, ...] = ()
    require_valid: bool = False  # refuse (exit 1) unless a valid signature comes from one of `keys`
    allow_unverified: bool = False  # replay a capsule that does not verify (the report says so at the top)

    def __post_init__(self) -> None:
        for key in self.keys:
            check_trust_key(key)
        if self.require_valid and not self.keys:
            raise UsageError("--require-valid needs at least one --trust-key: without a key, any signer "
                             "(or none) would pass")

    def showing(self) -> Trust:
        """The same keys, refusing nothing: for the commands that show what they find (inspect,
        diff, verify), and for a farm that opens every capsule before it judges any."""
        return Trust(self.keys, allow_unverified=True)

    def admit(self, name: str, verified: VerifyResult) -> None:
        """CapsuleRefused (exit 1, problems listed) unless this policy lets the capsule be replayed."""
        errors = [p.message for p in verified.problems if p.severity == "error"]
        if errors and not self.allow_unverified:
            shown = "; ".join(errors[:3]) + (f"; and {len(errors) - 3} more" if len(errors) > 3 else "")
            raise CapsuleRefused(f"{name}: does not verify ({shown}); not replayed "
                                 "(run `replay verify` for every problem, or --allow-unverified to replay it anyway)")
        if self.require_valid and (errors or verified.trusted is not True):
            why = errors[0] if errors else "no valid signature from a trusted key"
            raise CapsuleRefused(f"{name}: does not verify ({why}); not replayed (--require-valid)")


def check_trust_key(path: Path) -> Path:
    """The path, when it names a PEM public key (or certificate); UsageError otherwise.

    Checked before any capsule is read, so a typo in a key path is a usage error and
    not a silently untrusted capsule.
    """
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # /dev/zero would never end, a FIFO never answer
            what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise UsageError(f"--trust-key {path}: {what}; a trust key is a PEM public key or certificate file")
        with path.open("rb") as f:
            data = f.read(_MAX_KEY_BYTES + 1)
    except OSError as e:
        raise UsageError(f"--trust-key {PathError.of(path, e).line()}") from None
    if len(data) > _MAX_KEY_BYTES or not _is_pem_key(data):
        raise UsageError(f"--trust-key {path}: not a PEM public key or certificate")
    return path


def _is_pem_key(data: bytes) -> bool:
    from cryptography import x509  # here: most commands never check a key
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    for load in (load_pem_public_key, x509.load_pem_x509_certificate):
        try:
            load(data)
            return True
        except Exception:  # cryptography raises ValueError, TypeError or UnsupportedAlgorithm
            continue
    return False

"""The commands that read a capsule and change nothing: `replay inspect CAPSULE` (what it records,
group by group), `replay verify CAPSULE` (integrity and seal; the answer first, then every problem),
`replay diff A B` (both recorded outcomes, the facts that could change them, the command to run next),
`replay signature` (the failure signature of a command's output, as twin computes it) and
`replay render CAPSULE [-o DIR]` (the Dockerfile and build context, without building)."""
from __future__ import annotations

import shlex
from pathlib import Path

from ..build.precheck import CONTENT_CHECKS
from ..capsules.opening import open_capsule, verification
from ..capsules.trust import Trust, check_trust_key
from ..commands.answers import Compared, Inspected, RenderedAnswer, Signed, Verified
from ..commands.arguments import DiffArgs, InspectArgs, RenderArgs, SignatureArgs, VerifyArgs
from ..errors import UsageError
from ..facts.diff import diff_capsules
from ..replay import inputs as o
from ..replay.byhand import render_capsule
from ..replay.inputs import carried
from ..verdict import signature as sig
from ..verdict.output import read_output, signal_name
from .console import err


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


def inspect(a: InspectArgs) -> Inspected:
    return Inspected(open_capsule(a.capsule, Trust().showing()).shown)  # named as given: the URL, <stdin>, the path


def diff(a: DiffArgs) -> Compared:
    ca, cb = (open_capsule(c, Trust().showing()).shown for c in (a.a, a.b))  # named as given; nothing refused
    # the next command works as printed: the options this diff was given
    return Compared(ca, cb, diff_capsules(ca, cb), carried(a.values))


def signature(a: SignatureArgs) -> Signed:
    name = signal_name(a.signal)
    if (a.exit_code is None) == (name is None):
        raise UsageError("give exactly one of --exit-code N or --signal NAME")
    result = sig.compute(read_output(a.file, lambda line: err.print(line, markup=False)), a.exit_code, name)
    return Signed(result, a.exit_code, name)


def render(a: RenderArgs) -> RenderedAnswer:
    trust = o.trust(a.values)
    return RenderedAnswer(render_capsule(a.capsule, o.plan_options(a.values), trust, a.output, a.builder))

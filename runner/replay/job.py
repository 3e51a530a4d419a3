"""`replay CAPSULE`, the use case: verify, plan, build, run the attempts, judge.

The capsule is read once (capsules/opening.py): verification and planning share one parse,
and the report and every error name it as given (a URL, `<stdin>`, the path).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..engine import Engine
from ..build.sources.repo import NoRemote, RemoteFailed
from ..verdict.judge import Attempt, Expected, expected_of
from ..verdict.testsets import CUT_TAIL_NOTE
from ..build.plan import Plan
from ..build.planner import make_plan
from ..capsules.model import Capsule
from .decide import Outcome, Run, Until, fix_checked, replayed
from ..outcome.runreport import Baseline, CapsuleRef, ImageInfo, ReplayReport, Step, verification_of
from ..httpreplay.served import HttpReport
from .image import BuiltImage
from .options import ReplayOptions
from .progress import Progress
from .loading import Loader
from .replayer import Replayer
from .alternatives import try_alternatives
from .why import Change, likeliest
from .workdir import workdir_diff
from .world import replay_fidelity


def replay_capsule(given: Path | str, options: ReplayOptions, progress: Progress,
                   engine: Engine | None = None) -> ReplayReport:
    """`given`: a path, a URL or `-`; opened under `options.trust` (refused, exit 1, when it does
    not verify unless the policy allows it)."""
    replayer = Replayer(options, progress, engine=engine)
    loader = Loader(options, replayer.settings)
    name = str(given)
    try:
        with progress.step("verify capsule"):
            opened = loader.open(given)
        name, verified = opened.name, opened.verified
        with progress.step("plan"), opened.naming():
            capsule, plan = loader.plan(opened.capsule)
        expected = expected_of(capsule)
        run = _Series(replayer, plan, expected)
        before = _before(replayer, capsule, plan, expected)
        tried, unpinned = None, ""
        if before is None:
            outcome = replayed(expected, replayer.options.sampling, run)
            if replayer.options.alternatives and plan.alternatives:
                tried = try_alternatives(plan, expected, replayer.options.sampling, outcome, run,
                                         lambda p: _Series(replayer, p, expected), progress.say)
                outcome, run, plan = tried.outcome, tried.series, tried.plan  # type: ignore[assignment]
        else:
            base_run, names = before
            outcome = fix_checked(expected, replayer.options.sampling, base_run, run, names)
            outcome, unpinned = _unpinned(replayer, capsule, plan, expected, names, outcome)
        image, http, attempts = run.image, run.http, list(outcome.attempts)
        notes = list(plan.notes)
        if image.context and image.context.restored:
            notes += list(image.context.restored.notes)
        if image.context and image.built:
            notes += list(image.context.notes)
        if image.context:  # true of the image, built now or before
            notes += list(image.context.facts)
        if image.context and image.context.deps_node:  # true of the image, built now or before
            notes.append(image.context.deps_node.note())
        if http is not None and (http.unmatched or http.unused):
            notes.append(f"the program's HTTP traffic diverged from the recording: {len(http.unmatched)} "
                         f"request(s) matched nothing, {len(http.unused)} recorded call(s) never made")
        rerun = [str(i) for i, a in enumerate(attempts, 1) if a.reruns]
        if rerun:
            notes.append(f"the engine went away during attempt(s) {', '.join(rerun)}: each ran again in a fresh "
                         "container (what the lost run did is not counted)")
        if tried is not None and tried.said:
            notes.append(f"the recorded environment did not bring the failure back; tried {'; '.join(tried.said)}"
                         + (f": it came back with {tried.chosen.what}" if tried.chosen else ""))
        if replayer.options.workdir is not None:
            commit = plan.source.commit if plan.source else None
            notes.append(workdir_diff(replayer.options.workdir, commit).note(replayer.options.workdir, commit))
        if expected.tests_cut:
            notes.append(CUT_TAIL_NOTE)
        if before is not None and unpinned:
            notes.append(unpinned)
        if not verified.valid:
            notes.append("the capsule does not verify and was replayed anyway (--allow-unverified): "
                         "see the verification problems at the top")
        fidelity = replay_fidelity(plan, capsule.platform.libc_version, image.libc_version, image.unpinned + image.warm)
        why = likeliest(outcome.verdict, expected, attempts, fidelity, http, rerun_words(name, replayer.options),
                        argv=plan.argv, reads=image.reads, changes=_changes(plan, replayer.options, outcome.baseline))
        return ReplayReport(
            verdict=outcome.verdict, capsule=CapsuleRef(name, capsule.provenance.format.value, plan.capsule_id),
            expected=expected, attempts=tuple(attempts), fidelity=fidelity, why=why,
            alternative=tried.chosen.what if tried is not None and tried.chosen else None,
            alternatives_tried=tried.said if tried is not None else (),
            image=ImageInfo(image.ref, image.built, image.build_s, image.steps_run, replayer.engine.builder_name,
                            plan.base.key),
            verification=verification_of(verified), steps=tuple(Step(n, s) for n, s in progress.timings), drift=image.drift,
            http=http, notes=tuple(notes), baseline=outcome.baseline, rate=outcome.rate, fix=outcome.fix,
            kept=replayer.keeper.kept,
        )
    except (RemoteFailed, NoRemote) as exc:  # the line names the capsule whose remote it is
        raise exc.naming(name) from exc
    finally:
        replayer.close()


class _Series:
    """Runs the series of one plan's attempts (its image built once, when first needed) and
    keeps the last series' HTTP report."""

    def __init__(self, replayer: Replayer, plan: Plan, expected: Expected) -> None:
        self.replayer, self.plan, self.expected = replayer, plan, expected
        self.http: HttpReport | None = None
        self._image: BuiltImage | None = None

    @property
    def image(self) -> BuiltImage:
        if self._image is None:
            self._image = self.replayer.image(self.plan)
        return self._image

    def __call__(self, until: Until, side: str) -> list[Attempt]:
        attempts, self.http = self.replayer.attempts(self.plan, self.image, self.expected, until, side=side)
        return attempts


def _before(replayer: Replayer, capsule: Capsule, plan: Plan,
            expected: Expected) -> tuple[Run | None, tuple[str, str]] | None:
    """A fix check (--patch, or --ref) runs the recorded failure first, in the same run: a fix
    is only a fix of a failure that comes back here, and is judged against how often it does.
    With --patch the image differs from the patched one in the source layer only (the layers
    below come from the cache); with --ref the recorded commit and its diff are the baseline.
    A recorded pass has no failure to run first: its runs with the change are judged alone."""
    ref = replayer.options.plan.ref
    if plan.source is not None and plan.source.patch:
        names = ("the unpatched source", "with the patch")
        base_plan = dataclasses.replace(plan, source=dataclasses.replace(plan.source, patch=""))
    elif ref:
        names = ("the recorded commit", f"at {ref[:12]}")
        if not expected.failed:
            return None, names
        with replayer.progress.step("plan the recorded commit"):
            base_plan = make_plan(capsule, replayer.settings, dataclasses.replace(replayer.options.plan, ref=None))
    else:
        return None
    return _Series(replayer, base_plan, expected), names


def _changes(plan: Plan, options: ReplayOptions, baseline: Baseline | None) -> tuple[Change, ...]:
    """--ref and --patch as the story's first step: what ran instead of the recorded source."""
    before = f"; {baseline.before} (the baseline) was {baseline.verdict.upper()}" if baseline is not None else ""
    if plan.source is not None and plan.source.patch:
        return (Change("source --patch", f"the run applied the patch; the outcome changed after it{before}"),)
    if options.plan.ref:
        return (Change(f"source --ref {options.plan.ref[:12]}", f"the run used {options.plan.ref[:12]} instead of the "
                       f"recorded commit; the outcome changed after it{before}"),)
    return ()


def _unpinned(replayer: Replayer, capsule: Capsule, plan: Plan, expected: Expected, names: tuple[str, str],
              outcome: Outcome) -> tuple[Outcome, str]:
    """A fix judged FIXED under the recorded seeds or the capsule's pin (build/seeding.py) is checked
    again with seeds drawn anew: a patch that only changes which inputs a seed draws is not a fix."""
    opts = dataclasses.replace(replayer.options.plan, seeds=False)
    free = make_plan(capsule, replayer.settings, opts)
    if outcome.verdict != "fixed" or (free.env, free.argv, free.cpus, free.clock_start) == \
            (plan.env, plan.argv, plan.cpus, plan.clock_start):
        return outcome, ""
    base = make_plan(capsule, replayer.settings, dataclasses.replace(opts, ref=None, patch=""))
    again = fix_checked(expected, replayer.options.sampling, _Series(replayer, base, expected),
                        _Series(replayer, free, expected), names)
    if again.verdict == "fixed":
        return outcome, "fixed under the recorded seeds / the pin, and confirmed with them drawn anew (--no-seeds)"
    return again, (f"fixed under the recorded seeds / the pin only: with them drawn anew (--no-seeds) it is "
                   f"{again.verdict}, which is the verdict")


def rerun_words(capsule: str, options: ReplayOptions) -> list[str]:
    """`replay CAPSULE` with what this replay was given that a rerun needs (--repo, --env names)."""
    words = ["replay", capsule if not capsule.startswith("-") or capsule == "-" else f"./{capsule}"]
    if options.plan.repo:
        words += ["--repo", options.plan.repo]
    for name, _ in options.plan.env_overrides:  # a supplied value is the shell's, never printed
        words += ["--env", f"{name}=${name}"]
    return words

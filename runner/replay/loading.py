"""The stage before the image: a capsule opened under a replay's trust policy and planned under its
options (`--repo`, `--workdir`, `--env`...). The image service (imageservice.py) then makes the
plan's image, and the runner of attempts (replayer.py) runs it: each step has its own object.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..build.plan import Plan
from ..build.planner import make_plan
from ..capsules.model import Capsule
from ..capsules.opening import Opened, open_capsule
from ..config import Settings, settings as load_settings
from .options import ReplayOptions
from .workdir import same_repository


class Loader:
    def __init__(self, options: ReplayOptions = ReplayOptions(), settings: Settings | None = None) -> None:
        self.options = options
        self.settings = settings or load_settings()

    def open(self, given: Path | str) -> Opened:
        """The capsule, opened under this replay's trust policy (refused when it does not verify)."""
        return open_capsule(given, self.options.trust)

    def load(self, given: Path | str) -> tuple[Capsule, Plan]:
        """Opened and planned; errors about its files name the capsule as given."""
        opened = self.open(given)
        with opened.naming():
            return self.plan(opened.capsule)

    def plan(self, capsule: Capsule) -> tuple[Capsule, Plan]:
        """--workdir DIR without --repo: DIR's own git gives the recorded commit, which DIR must hold."""
        options = self.options.plan
        if self.options.workdir is not None and options.repo is None and capsule.repo and capsule.repo.commit:
            options = dataclasses.replace(options, repo=self.options.workdir)
        plan = make_plan(capsule, self.settings, options)
        if self.options.workdir is not None:
            same_repository(self.options.workdir, plan.source.commit if plan.source else None)
        return capsule, plan

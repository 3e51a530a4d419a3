"""`replay ci …`: what the CI jobs call besides `replay` itself — finding a PR's capsules,
posting its comments (GitHub), building the runner image, the job's summary. Errors reach the
one edge (runner/cli/main.py) like every other command's."""
from __future__ import annotations

import os
from pathlib import Path

from ..ci.github import GitHub
from ..commands.arguments import CiFindArgs, CiImageArgs, CiPostArgs, CiSummaryArgs
from ..textsafe import escaped
from .console import err, out


def _client(repo: str) -> GitHub:
    return GitHub(repo, token=os.environ.get("GITHUB_TOKEN") or None)


def find(a: CiFindArgs) -> int:
    for found in _client(a.repo).find_capsules(a.pr, a.out):
        if found.path is not None:
            out.print(str(found.path), markup=False, highlight=False)
        else:
            err.print(escaped(f"skipped {found.url} (issue #{found.issue}): {found.why}"), markup=False, highlight=False)
    return 0


def post(a: CiPostArgs) -> int:
    gh = _client(a.repo)
    for f in a.files:
        err.print(f"{f}: {gh.upsert_comment(a.pr, f.read_text(encoding='utf-8'))}", markup=False, highlight=False)
    return 0


def image(a: CiImageArgs) -> int:
    from ..ci.runner_image import build, prepare_context, source_root
    from ..config import Settings

    settings = Settings()
    if a.context_only is not None:
        prepare_context(source_root(), a.context_only, settings.ca_files, a.base)
        out.print(str(a.context_only), markup=False, highlight=False)
        return 0
    from ..engine import DockerEngine

    say = (lambda s: None) if a.quiet else (lambda s: err.print(s, markup=False, highlight=False))
    out.print(build(DockerEngine(), settings, a.tag, a.base, say), markup=False, highlight=False)
    return 0


def summary(a: CiSummaryArgs) -> int:
    from ..ci.step_summary import render as render_summary

    text = render_summary(a.capsule, a.farm_run, a.repo)
    env_target = os.environ.get("GITHUB_STEP_SUMMARY")
    target = a.out or (Path(env_target) if env_target else None)
    if target is not None:  # a file of its own is written; GitHub's summary file is appended to
        with target.open("w" if a.out else "a", encoding="utf-8") as f:
            f.write(text)
    out.print(text, markup=False, highlight=False, end="")
    return 0

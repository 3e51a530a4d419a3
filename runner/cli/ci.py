"""`replay ci …`: what the CI jobs call besides `replay` itself — finding a PR's capsules,
posting its comments (GitHub), and building the runner image. Errors reach the one edge
(runner/cli/main.py) like every other command's."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ..ci.github import GitHub
from ..ci.image import build, prepare_context, source_root
from ..ci.summary import render as render_summary
from ..config import Settings
from .console import err, out

RepoOpt = Annotated[str, typer.Option("--repo", help="OWNER/REPO (GITHUB_REPOSITORY in Actions).")]
PrOpt = Annotated[int, typer.Option("--pr", min=1, help="The pull request's number.")]


def _client(repo: str) -> GitHub:
    return GitHub(repo, token=os.environ.get("GITHUB_TOKEN") or None)


def find(repo: RepoOpt, pr: PrOpt,
         dest: Annotated[Path, typer.Option("--out", help="Where to save the capsules.")] = Path("capsules")) -> None:
    """Save the capsules attached to the issues the PR closes; print their paths, one a line (exit 3: GitHub did not answer)."""
    for a in _client(repo).find_capsules(pr, dest):
        if a.path is not None:
            out.print(str(a.path), markup=False, highlight=False)
        else:
            err.print(f"skipped {a.url} (issue #{a.issue}): {a.why}", markup=False, highlight=False)


def post(files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Comments `replay CAPSULE --comment` wrote.")],
         repo: RepoOpt, pr: PrOpt) -> None:
    """Create or update the PR's comment for each comment FILE (matched by its hidden marker)."""
    gh = _client(repo)
    for f in files:
        err.print(f"{f}: {gh.upsert_comment(pr, f.read_text(encoding='utf-8'))}", markup=False, highlight=False)


def image(
    tag: Annotated[str, typer.Option("--tag", "-t", help="The image's name.")] = "replay:latest",
    base: Annotated[str | None, typer.Option("--base", help="FROM this image (default: the official Python image, else the local base).")] = None,
    context_only: Annotated[Path | None, typer.Option("--context-only", metavar="DIR", help="Only write the build context to DIR (then `docker build DIR`).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not stream the build log.")] = False,
) -> None:
    """Build replay's runner image, trusting the CA certificates replay's own builds trust."""
    settings = Settings()
    if context_only is not None:
        prepare_context(source_root(), context_only, settings.ca_files, base)
        out.print(str(context_only), markup=False, highlight=False)
        return
    from ..engine import DockerEngine

    say = (lambda s: None) if quiet else (lambda s: err.print(s, markup=False, highlight=False))
    out.print(build(DockerEngine(), settings, tag, base, say), markup=False, highlight=False)


def summary(
    capsule: Annotated[Path, typer.Argument(metavar="CAPSULE", help="The capsule the job replayed.")],
    farm_run: Annotated[Path, typer.Argument(metavar="FARM_RUN_JSON", help="`replay farm run --json`'s answer.")],
    repo: Annotated[str | None, typer.Option("--repo", help="The --repo the replay was given.")] = None,
    dest: Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Write the summary here (default: append to $GITHUB_STEP_SUMMARY).")] = None,
) -> None:
    """The job's summary as Markdown: the verdict sentence of the night and the capsule's fidelity (nothing is replayed again)."""
    text = render_summary(capsule, farm_run, repo)
    target = dest or (Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None)
    if target is not None:  # a file of its own is written; GitHub's summary file is appended to
        with target.open("w" if dest else "a", encoding="utf-8") as f:
            f.write(text)
    out.print(text, markup=False, highlight=False, end="")


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="What the CI jobs call: a PR's capsules and comments (GitHub), the runner image, the job's summary.",
                        no_args_is_help=True)
    group.command("find")(find)
    group.command("post")(post)
    group.command("image")(image)
    group.command("summary")(summary)
    app.add_typer(group, name="ci")

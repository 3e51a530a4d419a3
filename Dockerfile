# replay itself as an image, for CI runners and farm workers that drive the host's
# Docker engine through its socket:
#   replay ci image --tag replay:latest         # prepares the context (CA certificates), builds
#   docker run --rm -v /var/run/docker.sock:/var/run/docker.sock -v "$PWD:/w" -w /w replay:latest CAPSULE
# BASE defaults to the official Python image; where no registry answers, build FROM the
# local base (scripts/setup makes it): --build-arg BASE=replay-base/debian:bookworm
# (replay ci image picks it by itself when the default cannot be had).
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}
# git: sources at the recorded commit; docker.io: the 20.10 CLI, which builds with BuildKit
# against the host's engine (and brings iptables, for the replay network's rules when the
# container may set them); python3-venv where the base is plain Debian. Plain-HTTP apt from
# Debian's mirror needs no CA.
RUN set -eu; export DEBIAN_FRONTEND=noninteractive; apt-get update -q; \
    apt-get install -y -q --no-install-recommends git docker.io ca-certificates curl \
      $(command -v python3 >/dev/null || echo python3 python3-venv); \
    rm -rf /var/lib/apt/lists/*
# The CA certificates replay's own builds trust (REPLAY_CA_CERTS), copied into the context by
# replay ci image: pip below, and replay's downloads at run time, verify through them (a
# TLS-intercepting proxy). Inside the image they are the default REPLAY_CA_CERTS again.
COPY ci/image/ca-certificates/ /usr/local/share/ca-certificates/
RUN update-ca-certificates
COPY pyproject.toml README.md /src/replay/
COPY runner /src/replay/runner
COPY templates /src/replay/templates
COPY images /src/replay/images
RUN python3 -m venv /opt/replay && /opt/replay/bin/pip install --no-cache-dir /src/replay && rm -rf /src/replay
# The CI jobs' scripts (ci/github, ci/gitlab call them), on PATH.
COPY ci/replay-job.sh ci/pr-job.sh /usr/local/bin/
ENV PATH=/opt/replay/bin:$PATH
ENTRYPOINT ["replay"]

# replay itself as an image, for CI runners and farm workers that talk to a
# Docker engine through a mounted socket:
#   docker build -t replay .
#   docker run --rm -v /var/run/docker.sock:/var/run/docker.sock -v "$PWD:/w" -w /w replay CAPSULE
# BASE defaults to the official Python image; where no registry is reachable, pass
# --build-arg BASE=replay-base/debian:bookworm (made by scripts/setup).
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}
RUN set -eu; export DEBIAN_FRONTEND=noninteractive; apt-get update -q; \
    apt-get install -y -q --no-install-recommends git docker.io debootstrap ca-certificates \
      $(command -v python3 >/dev/null || echo python3 python3-venv); \
    rm -rf /var/lib/apt/lists/*
COPY . /src/replay
RUN python3 -m venv /opt/replay && /opt/replay/bin/pip install --no-cache-dir /src/replay && rm -rf /src/replay
ENV PATH=/opt/replay/bin:$PATH
ENTRYPOINT ["replay"]

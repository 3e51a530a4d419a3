"""What the docker engine does with kept containers (--keep, `replay shell --kept`): their labels, the
newest, a stopped one sealed (its state in a fresh, never-started container: no `--env` value in its
config, no output in its logs), a stopped one committed to an image, that image removed. A part of
DockerEngine (docker.py)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import UsageError
from .sdk import retrying, sdk_call, typed_errors


@typed_errors
class KeptContainers:
    client: Any  # the docker SDK's client (DockerEngine's)

    def container_labels(self, container_id: str) -> dict[str, str] | None:
        import docker.errors

        try:
            return dict(self.client.containers.get(container_id).labels or {})
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as exc:
            if exc.status_code == 400:  # a prefix of several containers' ids: the id given is the fault
                raise UsageError(f"{container_id}: {' '.join(str(exc.explanation or exc).split())[:200]}") from exc
            raise

    def newest(self, *labels: str) -> str | None:
        found = retrying(sdk_call)(self.client.api.containers, all=True, filters={"label": list(labels)})
        return str(max(found, key=lambda c: c.get("Created") or 0)["Id"]) if found else None

    def commit(self, container_id: str, ref: str, labels: Mapping[str, str]) -> str:
        repo, tag = ref.rsplit(":", 1)
        # the engine merges the container's own labels in; these win (as JSON: no Dockerfile quoting)
        image = retrying(sdk_call)(self.client.containers.get(container_id).commit, repository=repo, tag=tag,
                                   conf={"Labels": dict(labels)})
        return str(image.id)

    def seal(self, container_id: str, ref: str, labels: Mapping[str, str], drop_env: Sequence[str]) -> str:
        """The stopped container's filesystem in a new container, never started, with its labels and
        its config but the `drop_env` variables (the --env values, blanked in the image too: the
        engine's commit merges the container's environment into the image's); the old one removed.
        The new one's logs are empty. Its id."""
        old = retrying(sdk_call)(self.client.containers.get, container_id)
        config = old.attrs.get("Config") or {}
        env = [e for e in config.get("Env") or [] if e.split("=", 1)[0] not in drop_env]
        repo, tag = ref.rsplit(":", 1)
        image = retrying(sdk_call)(old.commit, repository=repo, tag=tag,
                                   conf={"Labels": dict(labels), "Env": [*env, *(f"{n}=" for n in drop_env)]})
        new = retrying(sdk_call)(self.client.containers.create, image.id, command=config.get("Cmd"), entrypoint=[],
                                 working_dir=config.get("WorkingDir") or None, environment=env,
                                 labels=dict(old.labels or {}), network_mode="none")
        retrying(sdk_call)(old.remove, force=True)
        return str(new.id)

    def remove_image(self, ref: str) -> None:
        import docker.errors

        try:
            self.client.images.remove(ref, force=True)
        except docker.errors.ImageNotFound:
            pass

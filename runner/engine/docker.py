"""The docker implementation of the Engine protocol (protocol.py), over the docker SDK.

Build yields events (builders.py: BuildKit through the engine's CLI, or the SDK's
classic builder), run returns a result; SDK errors become replay's own typed
errors. Transient failures (the daemon restarting, a socket hiccup) are retried
with tenacity and reported when they give up.
"""
from __future__ import annotations

import dataclasses
import os
import socket
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import requests

from .. import resources
from ..errors import EngineUnavailable, ReplayError, SubnetTaken
from .builders import build_with_cli, build_with_sdk, find_buildkit_cli
from .steps import BuildEvent
from .protocol import LABEL, OWNER_LABEL, READ_BACK_MAX_BYTES, RunResult, RunSpec
from .inventory import DockerInventory
from .kept import KeptContainers
from .relay import ExecChannels
from .sdk import ENGINE_RETURN_S, TransientEngineError, retrying, sdk_call, subnet_taken, typed_errors
from .specs import archive, docker_mount, limits, only_file

class _Interrupted(Exception):
    """An attempt whose container ended while the engine was away: its result cannot be trusted."""


_SIGNALS = {129: "SIGHUP", 130: "SIGINT", 131: "SIGQUIT", 132: "SIGILL", 134: "SIGABRT", 136: "SIGFPE",
            137: "SIGKILL", 139: "SIGSEGV", 141: "SIGPIPE", 143: "SIGTERM"}


# How many times an attempt is run when the engine went away under it (its result is lost then).
RUN_TRIES = 2


@typed_errors
class DockerEngine(KeptContainers, ExecChannels):
    """The real engine, through the docker SDK (and BuildKit's CLI for builds)."""

    def __init__(self, builder: str = "auto") -> None:
        import docker

        try:
            self.client = docker.from_env(timeout=120)
            self.client.ping()
        except Exception as exc:
            raise EngineUnavailable(f"no Docker engine answers; {resources.engine_fix()} ({type(exc).__name__})") from exc
        self._buildkit = find_buildkit_cli() if builder in ("auto", "buildkit") else None
        if builder == "buildkit" and self._buildkit is None:
            raise EngineUnavailable("REPLAY_BUILDER=buildkit but no docker CLI here can build with BuildKit")

    @property
    def builder_name(self) -> str:
        return "buildkit" if self._buildkit else "classic"

    def inventory(self) -> DockerInventory:
        """What is on this engine, as values (`replay gc`, doctor)."""
        return DockerInventory(self.client)

    # -- images -------------------------------------------------------------
    def image_exists(self, ref: str) -> bool:
        import docker.errors

        try:
            self.client.images.get(ref)
            return True
        except docker.errors.ImageNotFound:
            return False

    def image_id(self, ref: str) -> str:
        return str(self.client.images.get(ref).id)

    def image_env(self, ref: str) -> dict[str, str]:
        cfg = self.client.images.get(ref).attrs.get("Config") or {}
        return dict(e.split("=", 1) for e in cfg.get("Env") or [] if "=" in e)

    def import_rootfs(self, tar_path: Path, ref: str, changes: Sequence[str]) -> str:
        repo, tag = ref.rsplit(":", 1)
        with open(tar_path, "rb") as fh:
            retrying(sdk_call)(self.client.api.import_image_from_data, fh.read(), repository=repo, tag=tag,
                                 changes=list(changes))
        return str(retrying(sdk_call)(self.client.images.get, ref).id)

    def try_pull(self, repo: str, tag: str) -> bool:
        """Pull from a registry when one is reachable; False (quietly) when not."""
        try:
            self.client.images.pull(repo, tag=tag)
            return True
        except Exception:
            return False

    def tag(self, src: str, ref: str) -> None:
        repo, tag = ref.rsplit(":", 1)
        self.client.images.get(src).tag(repo, tag)

    def build(self, context: Path, tag: str, labels: Mapping[str, str], network: str = "default",
              timeout_s: float | None = None) -> Iterator[BuildEvent]:
        if self._buildkit:
            yield from build_with_cli(self._buildkit, context, tag, labels, network, self.answers, timeout_s)
        else:
            yield from build_with_sdk(self.client, context, tag, labels, network, self.answers, timeout_s)

    def answers(self, within: float = 0.0) -> bool:
        """Whether the engine answers a ping, waiting up to `within` seconds for it (a daemon restarting)."""
        deadline = time.monotonic() + within
        while True:
            try:
                if self.client.ping():
                    return True
            except Exception:  # noqa: BLE001 - not answering, whatever the SDK calls it
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.25)  # a poll of the engine's own answer, not a wait standing in for one

    # -- containers ---------------------------------------------------------
    def _create(self, spec: RunSpec, detach: bool = False) -> Any:
        kwargs: dict[str, Any] = dict(
            image=spec.image, command=list(spec.argv), environment=[f"{k}={v}" for k, v in spec.env],
            working_dir=spec.workdir, labels={**dict(spec.labels), OWNER_LABEL: owner()}, name=spec.name,
            detach=not spec.stdin_open,  # an interactive one's streams are attached (the SDK's AttachStdout...)
            tty=spec.tty, stdin_open=spec.stdin_open,
            mounts=[docker_mount(m, spec.labels) for m in spec.mounts], dns_opt=list(spec.dns_opts) or None,
            dns=list(spec.dns) or None, entrypoint=[], **limits(spec.containment),
        )
        if spec.network in ("none", "bridge", "host"):
            kwargs["network_mode"] = spec.network
        else:
            kwargs["network"] = spec.network
            if spec.aliases:
                kwargs["networking_config"] = {
                    spec.network: self.client.api.create_endpoint_config(aliases=list(spec.aliases))}
        # never a published port (Docker before 28 opens one to the LAN whatever address it names):
        # --debugger relays through the engine's API instead (relay.py)
        ctr = retrying(sdk_call)(self.client.containers.create, **kwargs)
        if spec.files:
            try:  # after create, before start: the program never sees the files missing
                retrying(sdk_call)(self.client.api.put_archive, ctr.id, "/", archive(spec.files))
            except BaseException:
                _quietly(ctr.remove, force=True)
                raise
        return ctr

    def run(self, spec: RunSpec, on_output: Callable[[bytes], None] | None = None) -> RunResult:
        """Run a container to its end. When the engine went away under it (a daemon restart ends the
        container), its result is lost: once the engine answers again, the attempt runs again in a fresh
        container (RUN_TRIES in all) and RunResult.reruns says so."""
        for n in range(1, RUN_TRIES + 1):
            try:
                return dataclasses.replace(self._run_once(spec, on_output), reruns=n - 1)
            except _Interrupted as exc:
                if n == RUN_TRIES or not self.answers(ENGINE_RETURN_S):
                    raise EngineUnavailable(f"the engine went away during an attempt ({exc}) and "
                                            + ("did not answer again" if n < RUN_TRIES else "again on its rerun")
                                            + "; check the engine with `replay doctor`") from exc
                if on_output is not None:
                    on_output(b"\nreplay: the engine went away during the attempt: running it again\n")
        raise AssertionError("unreachable")

    def _run_once(self, spec: RunSpec, on_output: Callable[[bytes], None] | None) -> RunResult:
        import docker.errors

        ctr = self._create(spec)
        started = time.monotonic()
        kept = False
        try:
            try:
                ctr.start()
            except docker.errors.APIError as exc:  # e.g. the recorded executable does not exist here
                msg = (getattr(exc, "explanation", None) or str(exc)).encode()
                return RunResult(127, msg, b"", time.monotonic() - started)
            follower = None
            if on_output is not None:
                follower = threading.Thread(target=_follow, args=(ctr, on_output), daemon=True)
                follower.start()
            timed_out = False
            try:
                status = self._wait(ctr, started + spec.timeout_s if spec.timeout_s else None)
                code: int | None = int(status.get("StatusCode", -1))
            except requests.exceptions.ReadTimeout:  # the command outlived --timeout
                _quietly(ctr.kill)
                timed_out, code = True, None
            duration = time.monotonic() - started
            if follower is not None:
                follower.join(FOLLOW_DRAIN_S)  # the stream's end (its last line) before the result
            retrying(sdk_call)(ctr.reload)
            state = ctr.attrs.get("State", {})
            result = RunResult(
                exit_code=code, output=retrying(sdk_call)(ctr.logs, stdout=True, stderr=True),
                stdout=retrying(sdk_call)(ctr.logs, stdout=True, stderr=False), duration_s=duration,
                timed_out=timed_out,
                oom_killed=bool(state.get("OOMKilled")), signal=_SIGNALS.get(code or 0) if code and code > 128 else None,
                files={p: data for p in spec.read_back if (data := self._read_back(ctr.id, p)) is not None},
                container=str(ctr.id) if spec.keep else None,
            )
            kept = spec.keep
            return result
        except TransientEngineError as exc:  # the connection kept dropping: the attempt's result is lost
            raise EngineUnavailable(f"the engine connection dropped during an attempt and did not come back "
                                    f"({exc.message[:200]}); check the engine with `replay doctor`") from exc
        finally:
            if not kept:  # a kept container is its caller's to remove (or `replay gc`'s)
                _remove(ctr)

    def _wait(self, ctr: Any, deadline: float | None) -> Any:
        """The container's end. A dropped connection with the container still running was a hiccup:
        wait on (the engine keeps its output). One that ended meanwhile may have been ended by the
        engine going away (a restart stops running containers): _Interrupted."""
        while True:
            try:
                return sdk_call(_wait_until, ctr, deadline)
            except TransientEngineError as exc:
                if not self.answers(ENGINE_RETURN_S):
                    raise
                retrying(sdk_call)(ctr.reload)
                if ctr.status != "running":
                    raise _Interrupted(exc.message[:200]) from exc

    def start(self, spec: RunSpec) -> str:
        """Start a long-lived container (a sidecar); returns its id."""
        ctr = self._create(spec, detach=True)
        ctr.start()
        return str(ctr.id)

    def container_ip(self, container_id: str, network: str) -> str:
        ctr = self.client.containers.get(container_id)
        return str(ctr.attrs["NetworkSettings"]["Networks"][network]["IPAddress"])

    def logs(self, container_id: str) -> bytes:
        out: Any = self.client.containers.get(container_id).logs(stdout=True, stderr=True)
        return bytes(out)

    def exec(self, container_id: str, argv: Sequence[str]) -> tuple[int, bytes]:
        res: Any = self.client.containers.get(container_id).exec_run(list(argv))
        return int(res.exit_code), bytes(res.output)

    def put_files(self, container_id: str, directory: str, files: Mapping[str, bytes]) -> None:
        """Hand files to a (created or running) container through the engine: no host path,
        so it works when replay itself runs in a container."""
        import io
        import tarfile

        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, data in sorted(files.items()):
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        self.client.api.put_archive(container_id, directory, buf.getvalue())

    def _read_back(self, container_id: str, path: str) -> bytes | None:
        """A file the command wrote, out of its ended container: None when it is not there, not a
        regular file, or larger than READ_BACK_MAX_BYTES (the engine's stat says so before any byte)."""
        import docker.errors

        try:
            stream, stat = self.client.api.get_archive(container_id, path)
        except docker.errors.APIError:  # not there, or a path the engine cannot stat (a file as a folder)
            return None
        if not stat or stat.get("size", 0) > READ_BACK_MAX_BYTES or stat.get("mode", 0) & 0o20000000000:
            return None  # too big, or a directory (Go's os.ModeDir in the engine's stat)
        try:
            return only_file(b"".join(stream))
        except (OSError, tarfile.TarError):
            return None

    def get_file(self, container_id: str, path: str) -> bytes:
        """One file out of a container (running or stopped), through the engine (an archive download);
        FileNotFoundError when there is none (or no such container)."""
        import docker.errors

        try:
            stream, _ = self.client.api.get_archive(container_id, path)
        except docker.errors.NotFound as exc:
            raise FileNotFoundError(path) from exc
        data = only_file(b"".join(stream))
        if data is None:
            raise ReplayError(f"engine: {path} in container {container_id[:12]} is not a file")
        return data

    def stop(self, container_id: str) -> None:
        import docker.errors

        try:
            self.client.containers.get(container_id).remove(force=True)
        except docker.errors.NotFound:
            pass

    def interactive(self, spec: RunSpec) -> int:
        """An interactive session (replay shell): the container made as an attempt's is (its files, its
        network and resolver, its labels), then the engine CLI attached to it owns the terminal;
        piped input works too (scripts, tests). The container is removed once it ends."""
        cli = shutil.which("docker") or "docker"
        tty = spec.tty and sys.stdin.isatty()
        ctr = self._create(dataclasses.replace(spec, tty=tty, stdin_open=True))
        try:
            return subprocess.call([cli, "start", "--attach", "--interactive", str(ctr.id)])
        finally:
            _remove(ctr)

    # -- networks and cleanup -----------------------------------------------
    def create_network(self, name: str, labels: Mapping[str, str], internal: bool = True,
                       bridge_name: str | None = None, ipam: Mapping[str, str] | None = None,
                       isolated: bool = False) -> str:
        """ipam: docker.types.IPAMPool fields (subnet, iprange, gateway) for an explicit address plan."""
        import docker.errors
        from docker.types import IPAMConfig, IPAMPool

        opts = {**({"com.docker.network.bridge.name": bridge_name} if bridge_name else {}),
                **({"com.docker.network.bridge.enable_icc": "false"} if isolated else {})} or None
        pools = IPAMConfig(pool_configs=[IPAMPool(subnet=ipam.get("subnet"), iprange=ipam.get("iprange"),
                                                  gateway=ipam.get("gateway"))]) if ipam else None
        try:
            net = retrying(sdk_call)(self.client.networks.create, name, driver="bridge", internal=internal,
                                       labels={**dict(labels), OWNER_LABEL: owner()}, options=opts, ipam=pools)
        except docker.errors.APIError as exc:
            if subnet_taken(exc):
                raise SubnetTaken(" ".join(str(exc).split())[:200]) from exc
            raise
        return str(net.id)

    def remove_network(self, name: str) -> None:
        import docker.errors

        try:
            self.client.networks.get(name).remove()
        except docker.errors.NotFound:
            pass

    def cleanup(self, label_value: str, spare: Sequence[str] = ()) -> None:
        """Remove every container, network and volume labelled replay=<label_value> (but the kept containers
        `spare` names)."""
        flt: dict[str, Any] = {"label": f"{LABEL}={label_value}"}
        try:
            leftovers = retrying(sdk_call)(self.client.containers.list, all=True, filters=flt)
        except Exception:  # noqa: BLE001 - an engine gone for good: what it holds is for `replay gc` later
            return
        for ctr in leftovers:
            if ctr.id not in spare:
                _quietly(ctr.remove, force=True)
        _quietly(self.client.networks.prune, filters=flt)
        _quietly(self.client.volumes.prune, filters=flt)


def owner() -> str:
    """This process, as the owner label names it."""
    return f"{socket.gethostname()}:{os.getpid()}"


FOLLOW_DRAIN_S = 5.0  # how long an attempt's result waits for -v's stream to say its end


def _follow(ctr: Any, on_output: Callable[[bytes], None]) -> None:
    """Stream a container's output (-v) beside the wait, so a silent command still times out."""
    try:
        for chunk in ctr.logs(stream=True, follow=True):
            on_output(chunk)
    except Exception:
        pass
    finally:
        on_output(b"")  # the stream's end (protocol.Engine.run)


def _wait_until(ctr: Any, deadline: float | None) -> Any:
    """Wait for the container; after a dropped connection, wait again for what is left of --timeout
    (the container runs on in the engine: re-attaching loses nothing)."""
    if deadline is None:
        return ctr.wait()
    left = deadline - time.monotonic()
    if left <= 0:
        raise requests.exceptions.ReadTimeout("the command outlived --timeout")
    return ctr.wait(timeout=left)


def _remove(ctr: Any) -> None:
    """Remove the container, through a connection hiccup too (a leftover is what gc is for, not the norm)."""
    try:
        retrying(sdk_call)(ctr.remove, force=True)
    except Exception:
        pass


def _quietly(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except Exception:
        pass

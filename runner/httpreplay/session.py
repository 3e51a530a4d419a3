"""A replay network: the recorded HTTP/HTTPS traffic, served by a sidecar, and nothing else.

Use (runner/replay/replayer.py)::

    with HttpReplaySession(engine, settings, capsule.http_calls, label, base_ref,
                           denied_hosts=policy_denied) as http:
        for attempt in attempts:
            http.begin_attempt()                      # fresh recording per run
            c = http.container_settings()
            spec = RunSpec(..., network=c.network, dns=c.dns, dns_opts=c.dns_opts,
                           files=(*files, *c.files), env=(*env, *c.env))  # c.env last: it wins
            engine.run(spec)
            report = http.report()                    # HttpReport of that attempt
    # http.report() still works after the block (the events were kept)

What it sets up, and undoes on exit (also when setup fails half-way):
- the sidecar image (images/httpreplay, FROM base_ref), built once and tagged by the
  content hash of its build context;
- an internal Docker network (nothing leaves it) on a subnet of its own
  (addressing.py): Docker's IPAM gives containers its lower half, each recorded host
  gets an address of the upper half; its bridge is named `rpl<12 hex>`, with
  iptables REJECT rules for that bridge in INPUT (so it cannot reach the host's own
  services: Docker isolates internal networks in FORWARD only) and DOCKER-USER (so a
  connection to an outside address fails at once instead of hanging). Without
  iptables the rules are skipped and the report's notes say what that costs;
- a CA made for this replay (its private key never leaves this process) and a
  certificate per recorded host; the sidecar gets the host certificates and keys,
  the replayed container only the CA certificate (both through the engine, below);
- the sidecar, with one extra capability, NET_ADMIN, which its entry point uses to add
  the hosts' addresses to its own interface and then gives up (images/httpreplay/
  netsetup.py); it listens per host address on the ports that host answered on (see
  hostplan.py) and answers DNS. Addresses and listeners live in its network namespace
  and go when it goes; the network is labelled (engine.cleanup removes it on Ctrl-C).

The replayed container gets: the network; the sidecar as its DNS server (Docker's
embedded resolver forwards to it: recorded names get their host's address, every
other name NXDOMAIN, and every question is logged for the report); dns_opts
timeout:1 attempts:1 (should the sidecar be gone, lookups fail in 1 s, not 10); the
CA certificate over /etc/ssl/certs/ca-certificates.crt and at /replay/ca.crt (root's,
mode 0444); SSL_CERT_FILE,
REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE and NODE_EXTRA_CA_CERTS naming it; proxy
variables emptied (a recorded proxy host does not exist here). A Java keystore is
not populated: Java programs do not trust the replay CA (noted in the report).
Every file reaches a container through the engine (RunSpec.files: an archive upload
after create, before start) and the sidecar's event log comes back the same way
(engine.get_file), never through a host path: so it works when replay itself runs in
a container (the runner image) or against a remote DOCKER_HOST.
"""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ..engine.builders import context_digest
from ..capsules.model import HttpCall
from ..config import Settings
from ..engine import LABEL, Containment, ContainerFile, RunSpec
from ..errors import ReplayError, SubnetTaken
from ..resources import images_dir
from .addressing import (AddressPlan, AddressSpaceError, candidates, literal_subnets, plan_addresses,
                         read_route_entries)
from .ca import ReplayCA
from .hostplan import HostPlan, calls_document, plan_hosts
from .served import HttpReport, build_report

CA_TARGETS = ("/etc/ssl/certs/ca-certificates.crt", "/replay/ca.crt")
CA_ENV = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
PROXY_ENV = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
DNS_OPTS = ("timeout:1", "attempts:1")
READY_TIMEOUT_S = 30.0
NETWORK_TRIES = 8  # subnets tried when another network took the chosen one meanwhile
LITERAL_WAIT_S = 1800.0  # how long a replay waits for another one's network around the same recorded address
BRIDGE_PREFIX = "rpl"  # the replay networks' bridges (this module names them)
SIDECAR_CAPS = ("NET_ADMIN",)  # to add the hosts' addresses; dropped before the server starts
JAVA_NOTE = "Java's keystore does not hold the replay CA: HTTPS from Java programs fails verification"
JAVA_COMMANDS = frozenset({"java", "javac", "jshell", "mvn", "mvnw", "gradle", "gradlew", "sbt", "lein", "kotlin"})
EVENTS_PATH = "/replay/out/events.jsonl"  # the sidecar's event log, read back through the engine
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$")


class HttpReplayError(ReplayError):
    """The replay network could not be set up (exit 3)."""


@dataclass(frozen=True)
class ContainerSettings:
    """What the replayed container's RunSpec needs to join the replay network."""

    network: str
    dns_opts: tuple[str, ...]
    files: tuple[ContainerFile, ...]
    env: tuple[tuple[str, str], ...]
    dns: tuple[str, ...] = ()  # the sidecar: the replay network's resolver


def sidecar_digest(context: Path, base_ref: str) -> str:
    """The sidecar image's tag: its context's content (engine/builders.context_digest) on its base."""
    return context_digest(context, salt=base_ref, skip=("__pycache__",))[:16]


def ensure_image(engine: Any, settings: Settings, base_ref: str, label: str,
                 say: Callable[[str], None] = lambda s: None) -> str:
    """The sidecar image, built once per content of images/httpreplay and base."""
    if not _REF.match(base_ref):
        raise HttpReplayError(f"base image reference {base_ref!r} is not a valid image name")
    context = images_dir() / "httpreplay"
    tag = f"{settings.image_repo}-httpreplay:{sidecar_digest(context, base_ref)}"
    if engine.image_exists(tag):
        return tag
    say(f"building the replay server image {tag} (once)")
    with tempfile.TemporaryDirectory(prefix="replay-httpimg-") as tmp:
        ctx = Path(tmp) / "ctx"
        shutil.copytree(context, ctx, ignore=shutil.ignore_patterns("__pycache__"))
        # The engine interface takes no build args: the base goes in as the ARG's default.
        dockerfile = ctx / "Dockerfile"
        text = re.sub(r"(?m)^ARG BASE=.*$", f"ARG BASE={base_ref}", dockerfile.read_text())
        dockerfile.write_text(text)
        for _ in engine.build(ctx, tag, {LABEL: label, f"{LABEL}.cache": "httpreplay"}, timeout_s=settings.build_timeout_s):
            pass
    return tag


def _rules(bridge: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(chain, rule, what is lost without it). REJECT, not DROP: a blocked connection fails at once.

    INPUT: Docker isolates internal networks in FORWARD only, so without this rule the
    replay network reaches the host's own services. DOCKER-USER (evaluated first in
    FORWARD): Docker gives an internal network a default route and drops what leaves
    it, so a connection to any outside address hangs until its timeout; traffic
    between the program and the sidecar (bridge to the same bridge) is left alone.
    """
    return (
        ("INPUT", ("-i", bridge, "-j", "REJECT", "--reject-with", "icmp-port-unreachable"),
         "the replay network can reach this host's own services"),
        ("DOCKER-USER", ("-i", bridge, "!", "-o", bridge, "-j", "REJECT", "--reject-with", "icmp-net-unreachable"),
         "connections to outside addresses hang until their timeout instead of failing at once (nothing leaves)"),
    )


def _iptables(action: str, chain: str, rule: Sequence[str]) -> str | None:
    """Insert (-I) or delete (-D) one rule; the reason when that is impossible."""
    tool = shutil.which("iptables")
    if tool is None:
        return "iptables is not installed"
    proc = subprocess.run([tool, action, chain, *rule], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"iptables {action} {chain} failed ({proc.stderr.strip()[:200]})"
    return None


def uses_java(argv: Sequence[str], runtimes: Sequence[str]) -> bool:
    """Whether the replayed command may be a Java program (the keystore note applies)."""
    return "java" in runtimes or bool(argv) and Path(argv[0]).name in JAVA_COMMANDS


class HttpReplaySession:
    def __init__(self, engine: Any, settings: Settings, calls: Sequence[HttpCall], label: str, base_ref: str,
                 denied_hosts: Sequence[str] = (), say: Callable[[str], None] = lambda s: None,
                 ignore: Sequence[str] = (), java: bool = False, image: str = "") -> None:
        """`ignore`: names left out of matching (--http-ignore); `java`: the command may run Java;
        `image`: the sidecar's image as the image service made it (replay/imageservice.py), else made here."""
        self.engine, self.settings, self.label, self.base_ref, self.say = engine, settings, label, base_ref, say
        self.image = image
        self.calls = tuple(calls)
        self.denied_hosts, self.ignore = tuple(denied_hosts), tuple(ignore)
        self.plan: HostPlan = plan_hosts(self.calls, denied_hosts)
        short = uuid.uuid4().hex[:12]
        self.network = f"replay-http-{short}"
        self.bridge = f"{BRIDGE_PREFIX}{short}"
        self.dns_opts = DNS_OPTS
        self.notes: list[str] = [JAVA_NOTE] if java else []
        self._inputs: tuple[ContainerFile, ...] = ()  # the sidecar's: calls, certificates and keys
        self._ca_pem: bytes | None = None
        self.addresses: AddressPlan | None = None
        self.dns: tuple[str, ...] = ()
        self._sidecar: str | None = None
        self._added_rules: list[tuple[str, tuple[str, ...]]] = []
        self._network_made = False
        self._overlap = ""  # the engine's last word on a subnet another network holds
        self._attempts = 0
        self._final_events: list[str] | None = None

    # -- context manager --------------------------------------------------------
    def __enter__(self) -> HttpReplaySession:
        try:
            self._open()
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close()

    def _open(self) -> None:
        image = self.image or ensure_image(self.engine, self.settings, self.base_ref, self.label, self.say)
        self.addresses = self._create_network()
        self._warn_unservable()
        self._make_inputs(self.addresses)
        for chain, rule, loss in _rules(self.bridge):
            problem = _iptables("-I", chain, rule)
            if problem:
                self.notes.append(f"{problem}: {loss}")
            else:
                self._added_rules.append((chain, rule))
        self._sidecar = self.engine.start(self._sidecar_spec(image))
        self._wait_ready()
        self.dns = (self.engine.container_ip(self._sidecar, self.network),)

    def _create_network(self) -> AddressPlan:
        """The network on a free subnet of the pool; the next one when another replay took it meanwhile.
        With recorded IPv4 addresses, a subnet that holds them (waiting for another replay's
        network around them), or, when none can be had here, those hosts are not served."""
        routes = read_route_entries()
        if self.plan.literals:
            placed = self._literal_network([net for iface, net in routes if not iface.startswith(BRIDGE_PREFIX)])
            if placed is not None:
                return placed
        try:
            subnets = list(candidates(len(self.plan.hosts), [net for _, net in routes]))
        except AddressSpaceError as exc:
            raise HttpReplayError(str(exc)) from exc
        for subnet in subnets[:NETWORK_TRIES]:
            plan = plan_addresses(self.plan.hosts, subnet)
            if self._try_network(plan):
                return plan
        raise HttpReplayError(f"the replay network could not be created: {self._overlap[:200] or 'no free subnet'}")

    def _literal_network(self, routes: Sequence[Any]) -> AddressPlan | None:
        literals = self.plan.literals
        subnets = literal_subnets(literals, len(self.plan.hosts), routes)
        if not subnets:  # this machine reaches that address itself (its LAN, a VPN, a bridge)
            why = "this machine's own network holds that address, so the replay network cannot"
            self.plan = plan_hosts(self.calls, self.denied_hosts, {h: f"{h}: {why}" for h in literals})
            return None
        deadline, waiting = time.monotonic() + LITERAL_WAIT_S, False
        while True:
            for subnet in subnets:
                plan = plan_addresses(self.plan.hosts, subnet, literals)
                if self._try_network(plan):
                    return plan
            if time.monotonic() > deadline:
                raise HttpReplayError(f"another replay's network held {subnets[0]} (around the recorded "
                                      f"{', '.join(literals)}) for {LITERAL_WAIT_S:g} s: "
                                      f"{self._overlap[:200]}")
            if not waiting:
                self.say(f"waiting for another replay's network on {subnets[0]} (the recorded address "
                         f"{literals[0]} needs it)")
                waiting = True
            time.sleep(2.0)

    def _try_network(self, plan: AddressPlan) -> bool:
        """Create the network on the plan's subnet; False when another network overlaps it."""
        try:
            self.engine.create_network(self.network, {LABEL: self.label}, internal=True, bridge_name=self.bridge,
                                       ipam=plan.docker_ipam)
        except SubnetTaken as exc:  # only another network on that subnet is worth another subnet
            self._overlap = str(exc)
            return False
        self._network_made = True
        return True

    def _warn_unservable(self) -> None:
        """Before the first attempt: every recorded call the replay cannot offer, and why."""
        for where, seqs, why in self.plan.unservable_by_host(self.calls):
            shown = ", ".join(f"#{s}" for s in seqs[:6]) + (" …" if len(seqs) > 6 else "")
            self.say(f"warning: {len(seqs)} recorded call(s) to {where} ({shown}) cannot be served: {why}")

    def _sidecar_spec(self, image: str) -> RunSpec:
        argv = ("python3", "-u", "/srv/httpreplay/netsetup.py", "--calls", "/replay/in/calls.json", "--",
                "python3", "-u", "/srv/httpreplay/server.py", "--calls", "/replay/in/calls.json",
                "--certs", "/replay/in/certs", "--events", EVENTS_PATH)
        # The server (root in its own container) appends to the log; its inputs stay read-only.
        log = ContainerFile(EVENTS_PATH, b"", 0o644)
        return RunSpec(image=image, argv=argv, network=self.network, labels=((LABEL, self.label),),
                       containment=Containment(memory="256m", pids_limit=512, cap_add=SIDECAR_CAPS),
                       files=(*self._inputs, log))

    def _make_inputs(self, addresses: AddressPlan) -> None:
        """The sidecar's inputs, in memory: they go to it through the engine (the keys never touch a disk here)."""
        doc, tokens = calls_document(self.calls, self.plan, addresses.hosts, self.ignore)
        files = [ContainerFile("/replay/in/calls.json", doc.encode("utf-8"))]
        ca = ReplayCA(self.label)
        for host, token in tokens.items():
            issued = ca.issue(host)
            files += [ContainerFile(f"/replay/in/certs/{token}.crt", issued.cert_pem),
                      ContainerFile(f"/replay/in/certs/{token}.key", issued.key_pem, 0o400)]
        self._inputs, self._ca_pem = tuple(files), ca.cert_pem

    def _wait_ready(self) -> None:
        assert self._sidecar is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            logs = self.engine.logs(self._sidecar)
            if b"READY" in logs:
                return
            if b"Traceback" in logs or b"netsetup:" in logs:
                break
            time.sleep(0.05)
        tail = self.engine.logs(self._sidecar).decode("utf-8", "replace").strip().splitlines()[-3:]
        raise HttpReplayError(f"the replay server did not start: {' / '.join(tail) or 'no output'}")

    def _close(self) -> None:
        """Undo everything, each step on its own: one failing must not leak the others."""
        if self._final_events is None:
            self._final_events = self._event_lines()
        steps: list[Callable[[], Any]] = []
        sidecar = self._sidecar
        if sidecar:
            steps.append(lambda: self.engine.stop(sidecar))
        if self._network_made:
            steps.append(lambda: self.engine.remove_network(self.network))
        steps += [functools.partial(_iptables, "-D", chain, rule) for chain, rule in reversed(self._added_rules)]
        for step in steps:
            try:
                step()
            except Exception as exc:  # keep going; say what is left behind
                self.say(f"cleanup step failed ({exc}); `docker network prune --filter label=replay` may be needed")
        self._sidecar, self._network_made, self._added_rules = None, False, []
        self._inputs, self._ca_pem = (), None

    # -- for the replayed container -----------------------------------------------
    @property
    def files(self) -> tuple[ContainerFile, ...]:
        """The CA certificate (never its key), read-only, over the system store and at /replay/ca.crt."""
        assert self._ca_pem is not None, "use HttpReplaySession as a context manager"
        return tuple(ContainerFile(target, self._ca_pem, 0o444) for target in CA_TARGETS)

    @property
    def env(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, CA_TARGETS[1]) for name in CA_ENV) + tuple((name, "") for name in PROXY_ENV)

    def container_settings(self) -> ContainerSettings:
        return ContainerSettings(self.network, self.dns_opts, self.files, self.env, self.dns)

    def begin_attempt(self) -> None:
        """Call before each run: the second and later runs get the whole recording again."""
        self._attempts += 1
        if self._attempts == 1 or self._sidecar is None:
            return
        marks = self._count_attempts()
        self.engine.exec(self._sidecar, ["python3", "-c", "import os, signal; os.kill(1, signal.SIGHUP)"])
        deadline = time.monotonic() + 5.0
        while self._count_attempts() == marks and time.monotonic() < deadline:
            time.sleep(0.02)

    # -- after the run --------------------------------------------------------------
    def _event_lines(self) -> list[str]:
        if self._final_events is not None:
            return self._final_events
        if self._sidecar is None:
            return []
        try:
            data: bytes = self.engine.get_file(self._sidecar, EVENTS_PATH)
        except Exception:  # the sidecar is gone (it failed to start, or was removed): no events to read
            return []
        return data.decode("utf-8", errors="replace").splitlines()

    def _count_attempts(self) -> int:
        return sum(1 for line in self._event_lines() if '"event": "attempt"' in line)

    def report(self) -> HttpReport:
        """The last attempt: calls served, requests unmatched, recorded calls unused."""
        return build_report(self.calls, self._event_lines(), self.plan, self.notes)

"""The session's lifecycle against a fake engine (the real one: tests/integration)."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from runner.capsules.model import HttpCall, HttpError, HttpRequest, HttpResponse
from runner.config import Settings
from runner.engine import BuildEvent, RunSpec
from runner.httpreplay import session as sess
from runner.errors import SubnetTaken
from runner.httpreplay.session import HttpReplayError, HttpReplaySession, ensure_image, sidecar_digest


class FakeEngine:
    def __init__(self, have_image: bool = True, logs: bytes = b"READY [443]\n", overlaps: int = 0) -> None:
        self.have_image, self._logs, self.overlaps = have_image, logs, overlaps
        self.tried: list[dict[str, str]] = []
        self.built: list[tuple[str, str, dict[str, str]]] = []
        self.networks: dict[str, dict[str, Any]] = {}
        self.started: list[RunSpec] = []
        self.stopped: list[str] = []
        self.execs: list[list[str]] = []
        self.files: dict[str, bytes] = {}  # the sidecar's filesystem, as far as replay touches it

    def image_exists(self, ref: str) -> bool:
        return self.have_image

    def build(self, context: Path, tag: str, labels: Mapping[str, str], network: str = "default",
              timeout_s: float | None = None) -> Iterator[BuildEvent]:
        self.built.append((tag, (context / "Dockerfile").read_text(), dict(labels)))
        yield BuildEvent("done", image_id="sha256:x")

    def create_network(self, name: str, labels: Mapping[str, str], internal: bool = True,
                       bridge_name: str | None = None, ipam: Mapping[str, str] | None = None,
                       isolated: bool = False) -> str:
        self.tried.append(dict(ipam or {}))
        if len(self.tried) <= self.overlaps:  # what Docker says when another network holds the subnet
            raise SubnetTaken("400 Client Error: Pool overlaps with other one on this address space")
        self.networks[name] = {"labels": dict(labels), "internal": internal, "bridge": bridge_name,
                               "ipam": dict(ipam or {})}
        return name

    def container_ip(self, cid: str, network: str) -> str:
        return self.networks[network]["ipam"]["subnet"].replace(".0/24", ".2")

    def remove_network(self, name: str) -> None:
        self.networks.pop(name)

    def start(self, spec: RunSpec) -> str:
        self.started.append(spec)
        self.files.update({f.path: f.data for f in spec.files})
        return "ctr1"

    def logs(self, cid: str) -> bytes:
        return self._logs

    def exec(self, cid: str, argv: list[str]) -> tuple[int, bytes]:
        self.execs.append(argv)
        # what the server does on SIGHUP
        self.files[sess.EVENTS_PATH] += json.dumps({"event": "attempt"}).encode() + b"\n"
        return 0, b""

    def get_file(self, cid: str, path: str) -> bytes:
        return self.files[path]

    def stop(self, cid: str) -> None:
        self.stopped.append(cid)


CALLS = (
    HttpCall(1, 1.0, HttpRequest("GET", "https://api.example.com/v1"), HttpResponse(200, "OK", (), None)),
    HttpCall(2, 2.0, HttpRequest("GET", "https://nowhere.example.com/"), error=HttpError("dns", "ENOTFOUND")),
)


@pytest.fixture()
def rules(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, tuple[str, ...]]]:
    seen: list[tuple[str, str, tuple[str, ...]]] = []

    def fake(action: str, chain: str, rule: tuple[str, ...]) -> str | None:
        seen.append((action, chain, tuple(rule)))
        return None

    monkeypatch.setattr(sess, "_iptables", fake)
    return seen


def test_session_sets_up_and_tears_down_everything(rules: list[tuple[str, str, tuple[str, ...]]]) -> None:
    engine = FakeEngine()
    with HttpReplaySession(engine, Settings(), CALLS, "rid", "replay-base/debian:bookworm") as http:
        net = engine.networks[http.network]
        assert net["ipam"] == http.addresses.docker_ipam and net["ipam"]["subnet"].startswith("172.16.")
        assert {k: net[k] for k in ("labels", "internal", "bridge")} == {
            "labels": {"replay": "rid"}, "internal": True, "bridge": http.bridge}
        assert len(http.bridge) <= 15
        assert [(a, c, r[:2]) for a, c, r in rules] == [("-I", "INPUT", ("-i", http.bridge)),
                                                        ("-I", "DOCKER-USER", ("-i", http.bridge))]
        assert rules[1][2][2:4] == ("!", "-o")  # the program still reaches the sidecar on the same bridge
        (sidecar,) = engine.started
        assert sidecar.aliases == () and sidecar.containment.cap_add == ("NET_ADMIN",)  # to add the hosts' addresses
        assert sidecar.argv[:3] == ("python3", "-u", "/srv/httpreplay/netsetup.py")
        assert sidecar.network == http.network and ("replay", "rid") in sidecar.labels
        assert sidecar.mounts == ()  # everything through the engine: no host path
        modes = {f.path: f.mode for f in sidecar.files}
        doc = json.loads(engine.files["/replay/in/calls.json"])
        assert [c["seq"] for c in doc["calls"]] == [1]
        # the dns-only host gets no address; api.example.com gets the first of the upper half
        upper = net["ipam"]["subnet"].replace(".0/24", ".128")
        assert [(h["name"], h["address"], h["listen"]) for h in doc["hosts"]] == [("api.example.com", upper, [443])]
        assert sorted(p for p in modes if p.startswith("/replay/in/certs/")) == [
            "/replay/in/certs/h0.crt", "/replay/in/certs/h0.key"]
        assert modes["/replay/in/certs/h0.key"] == 0o400 and modes["/replay/in/calls.json"] == 0o444
        assert b"PRIVATE KEY" in engine.files["/replay/in/certs/h0.key"] and modes[sess.EVENTS_PATH] == 0o644
        c = http.container_settings()
        assert c.network == http.network and c.dns_opts == ("timeout:1", "attempts:1")
        assert c.dns == (net["ipam"]["subnet"].replace(".0/24", ".2"),)  # the sidecar resolves for the program
        assert [f.path for f in c.files] == ["/etc/ssl/certs/ca-certificates.crt", "/replay/ca.crt"]
        assert all(f.mode == 0o444 and b"BEGIN CERTIFICATE" in f.data and b"PRIVATE KEY" not in f.data
                   for f in c.files)
        assert "PRIVATE" not in repr(sidecar)  # a spec's repr never shows a key
        env = dict(c.env)
        assert env["SSL_CERT_FILE"] == env["NODE_EXTRA_CA_CERTS"] == "/replay/ca.crt"
        assert env["REQUESTS_CA_BUNDLE"] == env["CURL_CA_BUNDLE"] == "/replay/ca.crt" and env["HTTPS_PROXY"] == ""
        engine.files[sess.EVENTS_PATH] = json.dumps({"event": "served", "seq": 1, "method": "GET",
                                                     "url": "https://api.example.com/v1",
                                                     "outcome": "response 200"}).encode() + b"\n"
    assert engine.stopped == ["ctr1"] and engine.networks == {}
    assert [(a, c) for a, c, _ in rules[2:]] == [("-D", "DOCKER-USER"), ("-D", "INPUT")]
    assert rules[2][2] == rules[1][2] and rules[3][2] == rules[0][2]
    report = http.report()  # still available after the block
    assert [s.seq for s in report.served] == [1]
    assert [(c.seq, c.why) for c in report.unused] == [(2, "never looked up")]  # no dns event: never resolved


def test_begin_attempt_signals_the_server_from_the_second_run(rules: list[tuple[str, str, tuple[str, ...]]]) -> None:
    engine = FakeEngine()
    with HttpReplaySession(engine, Settings(), CALLS, "rid", "base:1") as http:
        http.begin_attempt()
        assert engine.execs == []
        http.begin_attempt()
        assert "SIGHUP" in engine.execs[0][-1]


def test_a_server_that_does_not_start_is_one_error_and_leaves_nothing(rules: list[tuple[str, str, tuple[str, ...]]]) -> None:
    engine = FakeEngine(logs=b"Traceback (most recent call last):\nOSError: [Errno 98] Address in use\n")
    with pytest.raises(HttpReplayError, match="did not start: .*Address in use"):
        with HttpReplaySession(engine, Settings(), CALLS, "rid", "base:1"):
            pass
    assert engine.stopped == ["ctr1"] and engine.networks == {} and [r[0] for r in rules] == ["-I", "-I", "-D", "-D"]


def test_no_iptables_is_a_note_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sess.shutil, "which", lambda name: None)
    with HttpReplaySession(FakeEngine(), Settings(), CALLS, "rid", "base:1") as http:
        pass
    notes = http.report().notes
    assert any(n.startswith("iptables is not installed: the replay network can reach this host") for n in notes)


def test_image_is_built_once_per_content_with_the_base_as_arg_default(tmp_path: Path) -> None:
    engine = FakeEngine(have_image=False)
    tag = ensure_image(engine, Settings(), "replay-base/debian:trixie", "rid")
    ((built_tag, dockerfile, labels),) = engine.built
    assert built_tag == tag and tag.endswith(sidecar_digest(sess.images_dir() / "httpreplay", "replay-base/debian:trixie"))
    assert "ARG BASE=replay-base/debian:trixie\n" in dockerfile and labels["replay"] == "rid"
    assert ensure_image(FakeEngine(have_image=True), Settings(), "replay-base/debian:trixie", "rid") == tag
    other = ensure_image(FakeEngine(have_image=True), Settings(), "replay-base/debian:bookworm", "rid")
    assert other != tag
    with pytest.raises(HttpReplayError, match="not a valid image name"):
        ensure_image(engine, Settings(), "x; rm -rf /", "rid")


def test_a_subnet_taken_meanwhile_is_retried_with_another(rules: list[tuple[str, str, tuple[str, ...]]]) -> None:
    engine = FakeEngine(overlaps=2)
    with HttpReplaySession(engine, Settings(), CALLS, "rid", "base:1") as http:
        assert len({t["subnet"] for t in engine.tried}) == 3
        assert engine.networks[http.network]["ipam"] == engine.tried[-1]


def test_no_free_subnet_is_one_error_and_leaves_nothing(rules: list[tuple[str, str, tuple[str, ...]]]) -> None:
    engine = FakeEngine(overlaps=100)
    with pytest.raises(HttpReplayError, match="could not be created: .*Pool overlaps"):
        with HttpReplaySession(engine, Settings(), CALLS, "rid", "base:1"):
            pass
    assert len(engine.tried) == sess.NETWORK_TRIES and engine.networks == {} and engine.started == [] and rules == []


LITERAL_CALLS = (
    HttpCall(1, 1.0, HttpRequest("GET", "http://10.1.2.3:8080/ping"), HttpResponse(200, "OK", (), None)),
    HttpCall(2, 2.0, HttpRequest("GET", "https://api.example.com/v1"), HttpResponse(200, "OK", (), None)),
    HttpCall(3, 3.0, HttpRequest("GET", "http://127.0.0.1:9000/health"), HttpResponse(200, "OK", (), None)),
)


def _said(http_say: list[str]) -> list[str]:
    return [s for s in http_say if s.startswith("warning:")]


def test_a_recorded_address_is_held_by_the_sidecar_on_a_subnet_around_it(
        rules: list[tuple[str, str, tuple[str, ...]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sess, "read_route_entries", lambda: [])
    said: list[str] = []
    engine = FakeEngine()
    with HttpReplaySession(engine, Settings(), LITERAL_CALLS, "rid", "base:1", say=said.append) as http:
        assert engine.networks[http.network]["ipam"]["subnet"] == "10.1.2.0/26"
        doc = json.loads(engine.files["/replay/in/calls.json"])
        assert {h["name"]: h["address"] for h in doc["hosts"]}["10.1.2.3"] == "10.1.2.3"
        # loopback is named before the first attempt, with why
        assert _said(said) == ["warning: 1 recorded call(s) to 127.0.0.1:9000 (#3) cannot be served: 127.0.0.1 is "
                               + sess.plan_hosts(LITERAL_CALLS).unservable[3].split(" is ", 1)[1]]
    report = http.report()
    assert [c.seq for c in report.unservable] == [3] and [c.seq for c in report.unused] == [1, 2]
    assert report.notes == ()  # no Java: no keystore note


def test_an_address_this_machine_reaches_itself_is_not_served_and_said_first(
        rules: list[tuple[str, str, tuple[str, ...]]], monkeypatch: pytest.MonkeyPatch) -> None:
    from ipaddress import IPv4Network

    monkeypatch.setattr(sess, "read_route_entries", lambda: [("eth0", IPv4Network("10.0.0.0/8"))])
    said: list[str] = []
    engine = FakeEngine()
    with HttpReplaySession(engine, Settings(), LITERAL_CALLS, "rid", "base:1", say=said.append, java=True) as http:
        assert engine.networks[http.network]["ipam"]["subnet"].startswith("172.16.")
        assert [h["name"] for h in json.loads(engine.files["/replay/in/calls.json"])["hosts"]] == ["api.example.com"]
    assert any("10.1.2.3:8080 (#1) cannot be served: 10.1.2.3: this machine's own network" in s for s in _said(said))
    assert [c.seq for c in http.report().unservable] == [1, 3]
    assert http.report().notes == (sess.JAVA_NOTE,)


def test_another_replays_network_around_the_same_address_is_waited_for(
        rules: list[tuple[str, str, tuple[str, ...]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sess, "read_route_entries", lambda: [])
    monkeypatch.setattr(sess.time, "sleep", lambda s: None)
    said: list[str] = []
    engine = FakeEngine(overlaps=3)  # the three candidate subnets refused once, then the first again
    with HttpReplaySession(engine, Settings(), LITERAL_CALLS, "rid", "base:1", say=said.append) as http:
        assert engine.networks[http.network]["ipam"]["subnet"] == "10.1.2.0/26"
    assert [t["subnet"] for t in engine.tried][:4] == ["10.1.2.0/26", "10.1.2.0/25", "10.1.2.0/24", "10.1.2.0/26"]
    assert sum("waiting for another replay's network on 10.1.2.0/26" in s for s in said) == 1


def test_the_ignored_names_reach_the_server_and_java_is_told_apart() -> None:
    engine = FakeEngine()
    with HttpReplaySession(engine, Settings(), CALLS, "rid", "base:1", ignore=("TS",)):
        assert json.loads(engine.files["/replay/in/calls.json"])["rules"] == {"ignore": ["ts"]}
    assert sess.uses_java(("./gradlew", "test"), ()) and sess.uses_java(("sh",), ("java",))
    assert not sess.uses_java(("node", "x.js"), ("node",))

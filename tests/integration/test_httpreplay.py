"""The replay network with the real engine: unchanged programs get recorded HTTPS answers.

One test image (Debian's python3-requests, nodejs 18 with fetch, curl, libfaketime)
and one replay session per module; both are labelled and removed at the end. The
sidecar image is kept: it is a cache keyed by its content.
"""
from __future__ import annotations

import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.build.sources.baseimage import DEFAULT, ensure_base
from runner.capsules import read_capsule
from runner.capsules.model import Capsule, HttpCall, HttpError, HttpRequest, HttpResponse, Body
from runner.build.clock import clock_start, faketime_env
from runner.config import Settings
from runner.engine import DockerEngine, RunResult, RunSpec
from runner.httpreplay import HttpReplaySession

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).parents[1] / "fixtures/examples/codeinstances/fetch-greeting.json"
TEST_IMAGE_DOCKERFILE = """\
FROM {base}
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
    python3 python3-requests nodejs curl ca-certificates libfaketime \\
 && rm -rf /var/lib/apt/lists/*
"""


def _ok(seq: int, url: str, text: str, method: str = "GET", body: str | None = None) -> HttpCall:
    data = text.encode()
    return HttpCall(seq, 0.0, HttpRequest(method, url, body=Body(text=body) if body is not None else None),
                    HttpResponse(200, "OK", (("Content-Type", "text/plain"), ("Content-Length", str(len(data))),
                                             ("Date", "Tue, 13 Oct 2026 08:00:00 GMT")), Body(text=text)))


@pytest.fixture(scope="module")
def capsule() -> Capsule:
    return read_capsule(EXAMPLE)


@pytest.fixture(scope="module")
def calls(capsule: Capsule) -> tuple[HttpCall, ...]:
    return capsule.http_calls + (
        _ok(2, "https://api.example.com/requests", "from requests"),
        _ok(3, "https://api.example.com/fetch", "from fetch"),
        _ok(4, "https://api.example.com/curl", "from curl"),
        _ok(5, "http://plain.example.com:8080/echo", "posted", method="POST", body="a=1"),
        HttpCall(6, 0.0, HttpRequest("GET", "https://gone.example.com/"), error=HttpError("dns", "ENOTFOUND")),
        _ok(7, "https://api.example.com/never", "never asked"),
        HttpCall(8, 0.0, HttpRequest("GET", "https://later.example.com/"), error=HttpError("dns", "EAI_AGAIN")),
        _ok(9, "https://later.example.com/", "resolved at last"),
    )


@pytest.fixture(scope="module")
def label() -> str:
    return f"test-http-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def base(engine: DockerEngine) -> str:
    return ensure_base(engine, Settings(), DEFAULT)


@pytest.fixture(scope="module")
def test_image(engine: DockerEngine, base: str, label: str) -> Iterator[str]:
    tag = f"replay-test/httpclients:{label}"
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Dockerfile").write_text(TEST_IMAGE_DOCKERFILE.format(base=base))
        for _ in engine.build(Path(ctx), tag, {"replay": label}):
            pass
    yield tag
    engine.client.images.remove(tag, force=True)


@pytest.fixture(scope="module")
def http(engine: DockerEngine, base: str, label: str, calls: tuple[HttpCall, ...],
         test_image: str) -> Iterator[HttpReplaySession]:
    with HttpReplaySession(engine, Settings(), calls, label, base) as session:
        session.begin_attempt()
        yield session
    engine.cleanup(label)


def run(engine: DockerEngine, http: HttpReplaySession, image: str, label: str, *argv: str,
        env: tuple[tuple[str, str], ...] = ()) -> RunResult:
    c = http.container_settings()
    spec = RunSpec(image=image, argv=argv, network=c.network, dns=c.dns, dns_opts=c.dns_opts, files=c.files,
                   env=env + c.env, labels=(("replay", label),), timeout_s=60)
    return engine.run(spec)


def test_python_urllib_unchanged_gets_the_recorded_https_response(engine, http, test_image, label, capsule) -> None:
    result = run(engine, http, test_image, label, *capsule.command.argv)
    assert (result.exit_code, result.stdout) == (0, b"hello\n"), result.output


def test_python_requests(engine, http, test_image, label) -> None:
    code = "import requests; r = requests.get('https://api.example.com/requests'); print(r.status_code, r.text)"
    result = run(engine, http, test_image, label, "python3", "-c", code)
    assert result.stdout == b"200 from requests\n", result.output


def test_node_fetch(engine, http, test_image, label) -> None:
    code = "fetch('https://api.example.com/fetch').then(r => r.text()).then(t => console.log(t))"
    result = run(engine, http, test_image, label, "node", "-e", code)
    assert result.stdout == b"from fetch\n", result.output


def test_curl_https_and_plain_http_post(engine, http, test_image, label) -> None:
    result = run(engine, http, test_image, label, "sh", "-c",
                 "curl -sS https://api.example.com/curl && echo && "
                 "curl -sS -i -d a=1 http://plain.example.com:8080/echo")
    assert result.exit_code == 0, result.output
    assert result.stdout == (b"from curl\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n"
                             b"Date: Tue, 13 Oct 2026 08:00:00 GMT\r\n\r\nposted")


def test_unmatched_request_gets_an_error_response(engine, http, test_image, label) -> None:
    result = run(engine, http, test_image, label, "curl", "-sS", "-w", "\n%{http_code}",
                 "https://api.example.com/v1/greetings")
    assert result.stdout.endswith(b"\n599") and b"Nearest recorded call: #1" in result.stdout


@pytest.fixture()
def host_listener() -> Iterator[int]:
    """A service on this host, which the replay network must not reach."""
    sock = socket.socket()
    sock.bind(("0.0.0.0", 0))
    sock.listen(4)
    sock.settimeout(0.2)
    accepted: list[object] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                accepted.append(sock.accept())
            except (TimeoutError, OSError):
                continue

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    yield sock.getsockname()[1]
    done.set()
    watcher.join(timeout=2)
    sock.close()
    assert accepted == []


def test_nothing_leaves_the_replay_network(engine, http, test_image, label, host_listener) -> None:
    gateway = engine.client.networks.get(http.network).attrs["IPAM"]["Config"][0]["Gateway"]
    code = f"""
import socket, time
def attempt(what, fn):
    t = time.monotonic()
    try:
        fn(); print(what, "OK")
    except OSError as e:
        print(what, "failed", type(e).__name__, round(time.monotonic() - t))
attempt("dns-recorded", lambda: socket.getaddrinfo("gone.example.com", 443))
attempt("dns-other", lambda: socket.getaddrinfo("example.org", 443))
attempt("internet", lambda: socket.create_connection(("1.1.1.1", 80), 5))
attempt("host", lambda: socket.create_connection(("{gateway}", {host_listener}), 2))
"""
    started = time.monotonic()
    result = run(engine, http, test_image, label, "python3", "-c", code)
    lines = result.stdout.decode().splitlines()
    assert lines[0].startswith("dns-recorded failed gaierror") and lines[1].startswith("dns-other failed gaierror")
    assert lines[2] == "internet failed OSError 0"  # rejected at the bridge: fails at once
    assert lines[3].startswith("host failed")
    assert time.monotonic() - started < 15


def test_each_host_has_its_own_address_and_the_sidecar_keeps_no_net_admin(engine, http, test_image, label) -> None:
    code = "import socket; print(*(socket.gethostbyname(h) for h in ('api.example.com', 'plain.example.com')))"
    result = run(engine, http, test_image, label, "python3", "-c", code)
    assert result.stdout.decode().split() == [http.addresses.hosts["api.example.com"],
                                              http.addresses.hosts["plain.example.com"]], result.output
    assert len(set(http.addresses.hosts.values())) == len(http.addresses.hosts) == 3  # api, later, plain
    rc, status = engine.exec(http._sidecar, ["grep", "-E", "^(CapInh|CapPrm|CapEff|CapBnd|NoNewPrivs)",
                                             "/proc/1/status"])
    fields = dict(line.split(":\t") for line in status.decode().splitlines())
    assert rc == 0 and fields == {"CapInh": "0000000000000000", "CapPrm": "0000000000000400",  # net_bind_service
                                  "CapEff": "0000000000000400", "CapBnd": "0000000000000400", "NoNewPrivs": "1"}


def test_a_host_that_failed_to_resolve_once_fails_that_lookup_then_answers(engine, http, test_image, label) -> None:
    code = """
import socket, urllib.request
try:
    urllib.request.urlopen("https://later.example.com/", timeout=5)
except Exception as e:
    print(type(e.reason).__name__)
print(urllib.request.urlopen("https://later.example.com/", timeout=5).read().decode())
"""
    result = run(engine, http, test_image, label, "python3", "-c", code)
    assert result.stdout.decode().splitlines() == ["gaierror", "resolved at last"], result.output


def test_program_sees_the_recorded_date(engine, http, test_image, label, capsule) -> None:
    start = clock_start(capsule.values, capsule.provenance.created_at)
    assert start is not None
    env = faketime_env(start)
    result = run(engine, http, test_image, label, "sh", "-c",
                 "date -u +%Y-%m-%dT%H:%M && python3 -c 'import datetime; print(datetime.date.today())' && "
                 "node -e 'setTimeout(() => console.log(new Date().toISOString().slice(0, 10)), 10)'", env=env)
    assert result.stdout.decode().splitlines() == ["2026-10-13T08:00", "2026-10-13", "2026-10-13"], result.output


def test_report_lists_served_unmatched_and_unused(http: HttpReplaySession) -> None:
    report = http.report()
    assert {s.seq for s in report.served} == {1, 2, 3, 4, 5, 6, 8, 9}
    assert all(s.approximated is None for s in report.served)
    # the recorded dns failure: the resolver saw the lookup and answered NXDOMAIN
    assert [s.outcome for s in report.served if s.seq == 6] == ["error dns: nxdomain"]
    assert [(u.url, u.nearest) for u in report.unmatched] == [("https://api.example.com/v1/greetings", 1)]
    assert [d.part for d in report.unmatched[0].differences] == ["path"]
    assert [c.seq for c in report.unused] == [7]
    # test_nothing_leaves_the_replay_network looked up a name the recording lacks
    assert [(h.host, h.nearest) for h in report.unrecorded_hosts] == [("example.org", "api.example.com")]
    assert [s.outcome for s in report.served if s.seq == 8] == ["error dns: nxdomain"]

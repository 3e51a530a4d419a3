"""Issue 4 on the real engine, through `replay` itself: a CodeInstances instance whose
program makes every kind of call a recording holds, replayed once.

The instance is written here (with its canonical id) and its recorded stdout is what
a faithful replay prints: one line per call. The program is `python3 -c`, each call
with a 2 s timeout; the whole replay takes about 10 s.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.capsules.codeinstances import compute_id
from runner.cli.main import main
from tests.envelope import result_of

pytestmark = pytest.mark.integration

API = "https://api.example.com"
BLOB = bytes(range(256)) * 4  # every byte value: not UTF-8, recorded as base64

# argv[1] is a port on the test's own machine, which the replay network must not reach.
PROGRAM = r'''
import hashlib, ipaddress, socket, struct, sys, urllib.error, urllib.request

def call(label, url, data=None, show=lambda b: b.decode()):
    headers = {"Content-Type": "application/json"} if data else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=2) as r:
            print(label, r.status, show(r.read()), flush=True)
    except urllib.error.HTTPError as e:
        print(label, e.code, e.headers.get("X-Replay"), flush=True)
    except Exception as e:
        e = e.reason if isinstance(e, urllib.error.URLError) else e
        print(label, type(e).__name__, flush=True)

def gateway():
    """The replay network's gateway (this host's side of the bridge), from the routes."""
    routes = [line.split() for line in open("/proc/net/route").read().splitlines()[1:]]
    ip = lambda h: ipaddress.IPv4Address(socket.inet_ntoa(struct.pack("<I", int(h, 16))))
    gw = [ip(r[2]) for r in routes if int(r[2], 16)]
    return str(gw[0] if gw else ip(next(r[1] for r in routes if int(r[1], 16))) + 1)

def connect(label, address):
    try:
        socket.create_connection(address, 2).close()
        print(label, "connected", flush=True)
    except OSError:
        print(label, "failed", flush=True)

A = "https://api.example.com"
call("post", A + "/items", b'{"name": "x"}')
call("get#1", A + "/counter")
call("get#2", A + "/counter")
call("binary", A + "/blob", show=lambda b: hashlib.sha256(b).hexdigest())
call("refused", "http://api.example.com:8081/")
call("connect-timeout", "http://slow.example.com:8082/")
call("timeout", A + "/slow")
call("reset", "http://api.example.com/reset")
call("dns", "https://gone.example.com/")
call("tls", "https://badtls.example.com/")
call("unmatched-body", A + "/items", b'{"name": "y"}')
call("unmatched-order", A + "/counter")
call("outside-name", "https://elsewhere.example.org/")
connect("outside-ip", ("1.1.1.1", 443))
connect("outside-host", (gateway(), int(sys.argv[1])))
'''

# What the program prints when every call comes back as recorded.
FAITHFUL = f"""\
post 201 {{"id": 7}}
get#1 200 one
get#2 200 two
binary 200 {hashlib.sha256(BLOB).hexdigest()}
refused ConnectionRefusedError
connect-timeout TimeoutError
timeout TimeoutError
reset ConnectionResetError
dns gaierror
tls SSLError
unmatched-body 599 unmatched
unmatched-order 599 unmatched
outside-name gaierror
outside-ip failed
outside-host failed
"""


def _body(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def _request(method: str, url: str, body: bytes | None = None) -> dict[str, Any]:
    host = url.split("/")[2]
    headers = [["Accept-Encoding", "identity"], ["Host", host], ["User-Agent", "Python-urllib/3.11"]]
    if body is not None:
        headers = [["Content-Length", str(len(body))], ["Content-Type", "application/json"], *headers]
    return {"method": method, "url": url, "headers": headers, "body": None if body is None else _body(body)}


def _response(status: int, reason: str, body: bytes, content_type: str = "text/plain") -> dict[str, Any]:
    return {"status": status, "reason": reason, "body": _body(body),
            "headers": [["Content-Type", content_type], ["Content-Length", str(len(body))]]}


def _error(kind: str, message: str) -> dict[str, str]:
    return {"kind": kind, "message": message}


RECORDED: tuple[tuple[dict[str, Any], str, dict[str, Any]], ...] = (
    (_request("POST", f"{API}/items", b'{"name": "x"}'), "response",
     _response(201, "Created", b'{"id": 7}', "application/json")),
    (_request("GET", f"{API}/counter"), "response", _response(200, "OK", b"one")),
    (_request("GET", f"{API}/counter"), "response", _response(200, "OK", b"two")),
    (_request("GET", f"{API}/blob"), "response", _response(200, "OK", BLOB, "application/octet-stream")),
    (_request("GET", "http://api.example.com:8081/"), "error", _error("connect-refused", "ECONNREFUSED")),
    (_request("GET", "http://slow.example.com:8082/"), "error", _error("connect-timeout", "timed out")),
    (_request("GET", f"{API}/slow"), "error", _error("timeout", "The read operation timed out")),
    (_request("GET", "http://api.example.com/reset"), "error", _error("reset", "ECONNRESET")),
    (_request("GET", "https://gone.example.com/"), "error", _error("dns", "ENOTFOUND gone.example.com")),
    (_request("GET", "https://badtls.example.com/"), "error", _error("tls", "sslv3 alert handshake failure")),
    (_request("GET", f"{API}/never"), "response", _response(200, "OK", b"never asked")),
)


def write_instance(path: Path, argv: list[str], stdout: str) -> Path:
    doc: dict[str, Any] = {
        "format": "codeinstances/0",
        "command": {"argv": argv, "cwd": "/home/sam"},
        "result": {"exitCode": 0, "signal": None, "durationMs": 9100.5, "stdout": {"text": stdout},
                   "stderr": {"text": ""}},
        "calls": [{"seq": seq, "atMs": 40.0 * seq, "request": request, outcome: answer}
                  for seq, (request, outcome, answer) in enumerate(RECORDED, 1)],
        "values": [],
    }
    doc = {"format": doc["format"], "id": compute_id(doc), **doc}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def host_port() -> Iterator[tuple[socket.socket, int]]:
    """A service listening on this host, on every address (so on the bridge gateway too)."""
    sock = socket.socket()
    sock.bind(("0.0.0.0", 0))
    sock.listen(4)
    sock.setblocking(False)  # a connection that got through waits in the backlog: accept() finds it
    yield sock, sock.getsockname()[1]
    sock.close()


@pytest.fixture(scope="module")
def replayed(engine: object, tmp_path_factory: pytest.TempPathFactory,
             host_port: tuple[socket.socket, int]) -> tuple[int, dict[str, Any]]:
    """`replay INSTANCE -n 1 --json`, once for the module: its exit code and report."""
    instance = write_instance(tmp_path_factory.mktemp("http-errors") / "instance.json",
                              ["python3", "-c", PROGRAM, str(host_port[1])], FAITHFUL)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main([str(instance), "-n", "1", "--json"])
    assert out.getvalue().strip(), f"no report (exit {rc})"
    return rc, result_of(out.getvalue())


def _served(report: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {s["seq"]: s for s in report["http"]["served"]}


def test_every_call_comes_back_as_recorded(replayed: tuple[int, dict[str, Any]]) -> None:
    rc, report = replayed
    assert report["attempts"][0]["stdout"].splitlines() == FAITHFUL.splitlines()
    assert (rc, report["verdict"]) == (0, "reproduced")


def test_post_repeats_and_binary_are_served_from_the_recording(replayed: tuple[int, dict[str, Any]]) -> None:
    served = _served(replayed[1])
    assert {seq: served[seq]["outcome"] for seq in (1, 2, 3, 4)} == {
        1: "response 201", 2: "response 200", 3: "response 200", 4: "response 200"}
    assert (served[1]["method"], served[1]["url"]) == ("POST", f"{API}/items")
    assert all(served[seq]["approximated"] is None for seq in (1, 2, 3, 4))


def test_each_recorded_error_comes_back_as_its_kind(replayed: tuple[int, dict[str, Any]]) -> None:
    http = replayed[1]["http"]
    served = _served(replayed[1])
    assert {seq: served[seq]["outcome"] for seq in (7, 8, 9, 10)} == {
        7: "error timeout: no answer", 8: "error reset: reset", 9: "error dns: nxdomain",
        10: "error tls: tls handshake failure"}
    assert [served[seq]["approximated"] for seq in (7, 8, 9, 10)] == [None, None, None, None]
    # refused (a closed port) and connect-timeout (a dropped SYN) are the kernel's answers, exact but unseen
    assert 5 not in served and 6 not in served
    assert any(n.startswith("#5: connect-refused: nothing listens on port 8081 of api.example.com") for n in http["notes"])
    assert any(n.startswith("#6: connect-timeout: port 8082 of slow.example.com's replay address drops")
               for n in http["notes"])


def test_unmatched_requests_are_reported_with_nearest_and_differences(
        replayed: tuple[int, dict[str, Any]]) -> None:
    unmatched = replayed[1]["http"]["unmatched"]
    assert [(u["method"], u["url"], u["body_bytes"], u["nearest"], u["nearest_request"]) for u in unmatched] == [
        ("POST", f"{API}/items", 13, 1, f"POST {API}/items"),
        ("GET", f"{API}/counter", 0, 2, f"GET {API}/counter")]
    assert [[d["part"] for d in u["differences"]] for u in unmatched] == [["body"], ["order"]]
    assert "!= recorded 13 bytes" in unmatched[0]["differences"][0]["why"]
    assert "all 2 recorded call(s) like this were already served" in unmatched[1]["differences"][0]["why"]


def test_recorded_calls_never_made_are_unused(replayed: tuple[int, dict[str, Any]]) -> None:
    assert replayed[1]["http"]["unused"] == [
        {"seq": 11, "method": "GET", "url": f"{API}/never", "why": "never requested"}]


def test_hosts_outside_the_recording_fail_and_nothing_leaves(
        replayed: tuple[int, dict[str, Any]], host_port: tuple[socket.socket, int]) -> None:
    lines = replayed[1]["attempts"][0]["stdout"].splitlines()
    assert lines[-3:] == ["outside-name gaierror", "outside-ip failed", "outside-host failed"]
    with pytest.raises(BlockingIOError):  # nothing reached the service on this host
        host_port[0].accept()
    # the name was looked up (NXDOMAIN) and is named; nothing was forwarded anywhere
    assert replayed[1]["http"]["unrecorded_hosts"] == [{"host": "elsewhere.example.org", "nearest": "slow.example.com"}]
    assert "1.1.1.1" not in json.dumps(replayed[1]["http"])
    assert not any("iptables" in n for n in replayed[1]["http"]["notes"])  # the REJECT rules were in place

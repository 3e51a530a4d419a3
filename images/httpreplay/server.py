"""The replay server: answers a replayed program's HTTP and HTTPS calls from a recording.

Standard library only, Python >= 3.9. It runs in a sidecar container that holds one
address per recorded host (netsetup.py adds them), and listens on each host's
address only on the ports that host answered on: a port where every call of that
host was refused is left closed (the kernel refuses the connection for real), and
one where every call timed out while connecting is held silent (a listener whose
accept queue is kept full, so the kernel drops the SYN and the client's connect
times out), whatever other hosts do on the same port. Its resolver (resolver.py)
answers the recorded names with those addresses and NXDOMAIN for every other name.

Each connection is sniffed: a TLS ClientHello (first byte 0x16) is answered with
TLS, the certificate of the host whose address was reached (or of the SNI name, when
that is another recorded host); anything else is plain HTTP.

Responses are written by hand, byte for byte as recorded: status line, recorded
headers in order, recorded body. http.server's BaseHTTPRequestHandler is not used
because send_response adds Server and Date headers. The only header ever added is
`Connection: close`, when the recorded response had no Content-Length (its framing,
chunked encoding, was connection-scoped and not recorded), so the body ends with
the connection.

Recorded failures come back as the same kind of failure: reset is a TCP reset
(SO_LINGER 0); timeout is a connection that never answers; tls is a
handshake_failure alert; dns, for a host that also answered, is NXDOMAIN from the
resolver for the lookup that failed when recorded. Approximated only where one
host's port both answered and failed to connect (the port must listen, so the
failure happens after the connection was accepted): connect-refused as a reset,
connect-timeout as an accepted connection that never answers; and a recorded dns
failure the program never looked up again (it kept an address) as a reset. A request that matches nothing is never
forwarded anywhere: it gets a 599 response whose body says why, and an `unmatched`
event naming the nearest recorded call and which parts differed.

Events are JSON lines: ready, attempt (SIGHUP resets the recording for a new
attempt), served, unmatched, dns, note.

Usage: server.py --calls calls.json --certs DIR [--events FILE] [--dns-port 53]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import matcher as m
from resolver import TYPE_A, DnsServer
from wire import Incoming, parse_sni, peek_client_hello, read_request, render_response

HOLD_MAX_S = 600.0  # the longest a "no answer" connection is held open
TLS_HANDSHAKE_FAILURE = b"\x15\x03\x01\x00\x02\x02\x28"  # fatal alert, handshake_failure


class EventLog:
    def __init__(self, path: Optional[str]) -> None:
        self._fh = open(path, "a", encoding="utf-8") if path else sys.stdout
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, **fields}, sort_keys=True)
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()


def _reset(conn: socket.socket) -> None:
    """Close with a TCP RST instead of a FIN."""
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        conn.close()


Origin = Tuple[str, int]  # (host, recorded port)


class ReplayServer:
    def __init__(self, doc: Dict[str, Any], certs_dir: str, events: EventLog,
                 port_map: Optional[Dict[int, int]] = None) -> None:
        self.matcher = m.Matcher(m.load_calls(doc), m.load_rules(doc))
        self.events = events
        self.stop = threading.Event()
        self.hosts: List[Dict[str, Any]] = list(doc.get("hosts") or [])
        self.contexts = self._contexts(self.hosts, certs_dir)
        self.port_map = dict(port_map or {})  # recorded -> actual port (tests: 0, any free port)
        self.bound: Dict[Origin, int] = {}
        self._listeners: List[socket.socket] = []

    @property
    def addresses(self) -> Dict[str, str]:
        """Recorded name -> its address: the resolver's table."""
        return {str(h["name"]).lower(): str(h["address"]) for h in self.hosts}

    @staticmethod
    def _contexts(hosts: List[Dict[str, Any]], certs_dir: str) -> Dict[str, ssl.SSLContext]:
        contexts = {}
        for host in hosts:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            token = str(host["token"])
            ctx.load_cert_chain(os.path.join(certs_dir, token + ".crt"), os.path.join(certs_dir, token + ".key"))
            ctx.set_alpn_protocols(["http/1.1"])  # no h2: the server speaks HTTP/1.1 only
            contexts[str(host["name"]).lower()] = ctx
        return contexts

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> Dict[Origin, int]:
        for host in self.hosts:
            name, address = str(host["name"]).lower(), str(host["address"])
            for port in host.get("listen") or ():
                sock = self._listen(address, int(port), backlog=64)
                sock.settimeout(0.5)  # lets the accept loop notice stop
                threading.Thread(target=self._accept_loop, args=(sock, name, int(port)), daemon=True).start()
                self.bound[(name, int(port))] = sock.getsockname()[1]
            for port in host.get("silent") or ():
                self.bound[(name, int(port))] = self._hold_silent(address, int(port))
        self.events.write("ready", ports=sorted({p for _, p in self.bound}))
        return dict(self.bound)

    def _listen(self, address: str, port: int, backlog: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, self.port_map.get(port, port)))
        sock.listen(backlog)
        self._listeners.append(sock)
        return sock

    def _hold_silent(self, address: str, port: int) -> int:
        """A port that never answers a SYN: Linux drops a SYN when the listener's accept queue
        is full, so a listener with backlog 0 that is never accepted from, holding one
        connection of our own, makes every client's connect time out, as a dropped SYN does."""
        sock = self._listen(address, port, backlog=0)
        actual = sock.getsockname()[1]
        filler = socket.create_connection((address, actual), timeout=5)
        self._listeners.append(filler)
        return int(actual)

    def dns_failing(self, name: str, qtype: int) -> bool:
        """Whether this lookup fails: the host's next call is a recorded dns failure. An A
        question (one per getaddrinfo) consumes it; other types only agree with it."""
        call = self.matcher.dns_error_next(name, take=qtype == TYPE_A)
        if call is not None and qtype == TYPE_A:
            self.events.write("served", seq=call.seq, method=call.request.method, url=call.request.url,
                              outcome="error dns: nxdomain", approximated=None)
        return call is not None

    def shutdown(self) -> None:
        self.stop.set()
        for sock in self._listeners:
            sock.close()

    def new_attempt(self) -> None:
        self.matcher.reset()
        self.events.write("attempt")

    def _accept_loop(self, listener: socket.socket, host: str, port: int) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn, host, port), daemon=True).start()

    # -- one connection ----------------------------------------------------------
    def _connection(self, conn: socket.socket, host: str, port: int) -> None:
        conn.settimeout(30)
        try:
            self._serve(conn, host, port)
        except (socket.timeout, ConnectionResetError, BrokenPipeError):
            conn.close()  # an idle keep-alive connection, or a client that went away: nothing to report
        except ssl.SSLError as exc:
            self.events.write("note", text=f"{host}:{port}: TLS handshake with the program failed ({exc.reason}); "
                                           "does it trust the replay CA?")
            conn.close()
        except Exception as exc:  # a broken client must not take the server down
            self.events.write("note", text=f"{host}:{port}: connection ended: {type(exc).__name__}: {exc}")
            conn.close()

    def _serve(self, conn: socket.socket, host: str, port: int) -> None:
        """One connection to `host`'s address: the program resolved that name, so it is the host."""
        hello = peek_client_hello(conn)
        if not hello:
            conn.close()
            return
        tls = hello[:1] == b"\x16"
        scheme = "https" if tls else "http"
        failure = self.matcher.take_connect_error((scheme, host, port))
        if failure is not None:
            self._emulate_error(conn, failure, tls_pending=tls)
            return
        if tls:
            sni = parse_sni(hello)
            conn = (self.contexts.get(sni or "") or self.contexts[host]).wrap_socket(conn, server_side=True)
        self._requests(conn, scheme, port, host)

    def _requests(self, conn: socket.socket, scheme: str, port: int, host: str) -> None:
        failure: Optional[m.Recorded] = None
        rfile = conn.makefile("rb")
        try:
            failure = self._request_loop(conn, rfile, scheme, port, host)
        finally:
            rfile.close()  # the socket really closes (or resets) only once its file is closed
        if failure is not None:
            self._emulate_error(conn, failure, tls_pending=False)
        else:
            conn.close()

    def _request_loop(self, conn: socket.socket, rfile: Any, scheme: str, port: int,
                      host: str) -> Optional[m.Recorded]:
        """Answer requests until the connection ends; a recorded failure to emulate, if one matched."""
        while not self.stop.is_set():
            incoming = read_request(rfile, conn)
            if incoming is None:
                return None
            req = m.from_target(incoming.method, scheme, host, port, incoming.target, incoming.body, incoming.headers)
            call: Optional[m.Recorded] = self.matcher.take(req)
            volatile: List[str] = []
            near = self.matcher.take_volatile(req) if call is None else None
            if near is not None:
                call, volatile = near
            if call is not None and call.response is None:
                return call
            close = self._answer(conn, req, incoming, call, volatile)
            if close:
                return None
        return None

    def _answer(self, conn: socket.socket, req: m.Request, incoming: Incoming, call: Optional[m.Recorded],
                volatile: List[str]) -> bool:
        """Answer one request with its recorded response (or the unmatched one); True to close.
        `volatile`: the values it differed in from the call (served all the same: rules.py)."""
        if call is None or call.response is None:
            return self._unmatched(conn, req, incoming)
        data, close = render_response(call.response, incoming.method == "HEAD", incoming.wants_close)
        # Logged before answering: once the client has its answer, the log already says so.
        self.events.write("served", seq=call.seq, method=req.method, url=req.url, outcome=f"response {call.response.status}",
                          **({"volatile": volatile} if volatile else {}))
        conn.sendall(data)
        return close

    def _unmatched(self, conn: socket.socket, req: m.Request, incoming: Incoming) -> bool:
        nearest, diffs = self.matcher.nearest(req)
        self.events.write("unmatched", method=req.method, url=req.url, body_bytes=len(req.body),
                          nearest=nearest.seq if nearest else None,
                          differences=[{"part": d.part, "why": d.why} for d in diffs])
        lines = [f"replay: no recorded call matches {req.method} {req.url}",
                 "The replay never forwards a request to the real network."]
        if nearest is not None:
            lines.append(f"Nearest recorded call: #{nearest.seq} {nearest.request.method} {nearest.request.url}")
            lines += [f"  {d.part}: {d.why}" for d in diffs]
        body = ("\n".join(lines) + "\n").encode("utf-8")
        unmatched = m.Response(599, "Not In Recording", (
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))),
            ("X-Replay", "unmatched")), body)
        data, close = render_response(unmatched, incoming.method == "HEAD", incoming.wants_close)
        conn.sendall(data)
        return close

    # -- recorded failures ---------------------------------------------------------
    def _emulate_error(self, conn: socket.socket, call: m.Recorded, tls_pending: bool) -> None:
        kind = call.error_kind or "reset"
        approx = ""
        if kind in ("timeout", "connect-timeout"):
            outcome = "no answer"
            if kind == "connect-timeout":
                approx = ("the connection was accepted, then never answered: this host's port also answered "
                          "other calls, so it cannot drop the SYN")
        elif kind == "tls" and tls_pending:
            outcome = "tls handshake failure"
        else:
            outcome = "reset"
            if kind == "dns":
                approx = "recorded dns, emulated as a TCP reset: the program connected without looking the name up again"
            elif kind != "reset":
                approx = (f"recorded {kind}, emulated as a TCP reset after connecting: this host also answers "
                          f"other calls{' on this port' if kind == 'connect-refused' else ''}")
        self.events.write("served", seq=call.seq, method=call.request.method, url=call.request.url,
                          outcome=f"error {kind}: {outcome}", approximated=approx or None)
        if outcome == "no answer":
            self._hold(conn)
        elif outcome == "tls handshake failure":
            conn.recv(65536)  # consume the peeked ClientHello, then refuse it
            conn.sendall(TLS_HANDSHAKE_FAILURE)
            conn.close()
        else:
            _reset(conn)

    def _hold(self, conn: socket.socket) -> None:
        """Never answer; keep the connection open until the client gives up."""
        conn.settimeout(1.0)
        deadline = time.monotonic() + HOLD_MAX_S
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                if not conn.recv(65536):
                    break
            except socket.timeout:
                continue
            except OSError:
                break
        conn.close()


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", required=True)
    ap.add_argument("--certs", required=True)
    ap.add_argument("--events", default=None, help="JSON-lines event log (default: stdout)")
    ap.add_argument("--dns-port", type=int, default=53)
    args = ap.parse_args(argv)
    with open(args.calls, encoding="utf-8") as fh:
        doc = json.load(fh)
    events = EventLog(args.events)
    server = ReplayServer(doc, args.certs, events)
    dns = DnsServer(server.addresses, events.write, port=args.dns_port, failing=server.dns_failing)
    ports = server.start()
    dns.start()

    def new_attempt(*_: Any) -> None:
        dns.new_attempt()
        server.new_attempt()

    signal.signal(signal.SIGHUP, new_attempt)
    signal.signal(signal.SIGTERM, lambda *_: server.stop.set())
    print("READY " + json.dumps(sorted({p for _, p in ports})), flush=True)
    while not server.stop.wait(1.0):
        pass
    server.shutdown()
    dns.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

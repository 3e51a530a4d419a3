"""The replay server: answers a replayed program's HTTP and HTTPS calls from a recording.

Standard library only, Python >= 3.9. It runs in a sidecar container whose network
aliases are the recorded host names, and listens on every recorded port. Each
connection is sniffed: a TLS ClientHello (first byte 0x16) is answered with TLS,
the certificate chosen by its SNI name; anything else is plain HTTP.

Responses are written by hand, byte for byte as recorded: status line, recorded
headers in order, recorded body. http.server's BaseHTTPRequestHandler is not used
because send_response adds Server and Date headers. The only header ever added is
`Connection: close`, when the recorded response had no Content-Length (its framing,
chunked encoding, was connection-scoped and not recorded), so the body ends with
the connection.

Recorded failures come back as the same kind of failure: reset is a TCP reset
(SO_LINGER 0); timeout and connect-timeout are a connection that never answers;
tls is a handshake_failure alert; connect-refused is a closed port when every call
on that port was refused (otherwise a reset, reported as approximated); dns is
emulated by the session (the host gets no alias), or as a reset when the host also
answered other calls. A request that matches nothing is never forwarded anywhere:
it gets a 599 response whose body says why, and an `unmatched` event naming the
nearest recorded call and which parts differed.

Events are JSON lines: ready, attempt (SIGHUP resets the recording for a new
attempt), served, unmatched, note.

Usage: server.py --calls calls.json --certs DIR [--events FILE] [--bind 0.0.0.0]
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


class ReplayServer:
    def __init__(self, doc: Dict[str, Any], certs_dir: str, events: EventLog, bind: str = "0.0.0.0",
                 port_map: Optional[Dict[int, int]] = None) -> None:
        self.matcher = m.Matcher(m.load_calls(doc))
        self.events = events
        self.bind = bind
        self.stop = threading.Event()
        self.contexts = self._contexts(doc.get("hosts") or {}, certs_dir)
        ports = self.serving_ports()
        self.port_map = {p: (port_map or {}).get(p, p) for p in ports}
        self.bound: Dict[int, int] = {}
        self._listeners: List[socket.socket] = []

    @staticmethod
    def _contexts(hosts: Dict[str, str], certs_dir: str) -> Dict[str, ssl.SSLContext]:
        contexts = {}
        for host, token in hosts.items():
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(os.path.join(certs_dir, token + ".crt"), os.path.join(certs_dir, token + ".key"))
            ctx.set_alpn_protocols(["http/1.1"])  # no h2: the server speaks HTTP/1.1 only
            contexts[host.lower()] = ctx
        return contexts

    def serving_ports(self) -> List[int]:
        """Every recorded port, except those where every call was refused: a closed port refuses for real."""
        by_port: Dict[int, List[m.Recorded]] = {}
        for call in self.matcher.calls:
            by_port.setdefault(call.request.port, []).append(call)
        return sorted(p for p, calls in by_port.items() if any(c.error_kind != "connect-refused" for c in calls))

    def hosts_on(self, scheme: str, port: int) -> List[str]:
        return sorted({c.request.host for c in self.matcher.calls if c.request.origin[0::2] == (scheme, port)})

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> Dict[int, int]:
        for recorded, actual in self.port_map.items():
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.bind, actual))
            sock.listen(64)
            sock.settimeout(0.5)  # lets the accept loop notice stop
            self._listeners.append(sock)
            self.bound[recorded] = sock.getsockname()[1]
            threading.Thread(target=self._accept_loop, args=(sock, recorded), daemon=True).start()
        self.events.write("ready", ports=sorted(self.bound))
        return dict(self.bound)

    def shutdown(self) -> None:
        self.stop.set()
        for sock in self._listeners:
            sock.close()

    def new_attempt(self) -> None:
        self.matcher.reset()
        self.events.write("attempt")

    def _accept_loop(self, listener: socket.socket, port: int) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn, port), daemon=True).start()

    # -- one connection ----------------------------------------------------------
    def _connection(self, conn: socket.socket, port: int) -> None:
        conn.settimeout(30)
        try:
            self._serve(conn, port)
        except (socket.timeout, ConnectionResetError, BrokenPipeError):
            conn.close()  # an idle keep-alive connection, or a client that went away: nothing to report
        except ssl.SSLError as exc:
            self.events.write("note", text=f"port {port}: TLS handshake with the program failed ({exc.reason}); "
                                           "does it trust the replay CA?")
            conn.close()
        except Exception as exc:  # a broken client must not take the server down
            self.events.write("note", text=f"port {port}: connection ended: {type(exc).__name__}: {exc}")
            conn.close()

    def _serve(self, conn: socket.socket, port: int) -> None:
        hello = peek_client_hello(conn)
        if not hello:
            conn.close()
            return
        tls = hello[:1] == b"\x16"
        scheme = "https" if tls else "http"
        candidates = self.hosts_on(scheme, port)
        host = (parse_sni(hello) if tls else None) or (candidates[0] if len(candidates) == 1 else None)
        failure = self.matcher.take_connect_error((scheme, host.lower(), port)) if host else None
        if failure is not None:
            self._emulate_error(conn, failure, tls_pending=tls)
            return
        if tls:
            ctx = self.contexts.get((host or "").lower()) or next(iter(self.contexts.values()), None)
            if ctx is None:
                _reset(conn)
                return
            conn = ctx.wrap_socket(conn, server_side=True)
        self._requests(conn, scheme, port, host)

    def _requests(self, conn: socket.socket, scheme: str, port: int, host: Optional[str]) -> None:
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
                      host: Optional[str]) -> Optional[m.Recorded]:
        """Answer requests until the connection ends; a recorded failure to emulate, if one matched."""
        first = True
        while not self.stop.is_set():
            incoming = read_request(rfile, conn)
            if incoming is None:
                return None
            # Plain HTTP names its host in the Host header; TLS named it in the SNI.
            name = (host or incoming.host if scheme == "https" else incoming.host or host) or ""
            if first and host is None:
                failure = self.matcher.take_connect_error((scheme, name.lower(), port))
                if failure is not None:
                    return failure
            first = False
            req = m.from_target(incoming.method, scheme, name, port, incoming.target, incoming.body)
            call = self.matcher.take(req)
            if call is not None and call.response is None:
                return call
            close = self._answer(conn, req, incoming, call)
            if close:
                return None
        return None

    def _answer(self, conn: socket.socket, req: m.Request, incoming: Incoming, call: Optional[m.Recorded]) -> bool:
        """Answer one request with its recorded response (or the unmatched one); True to close."""
        if call is None or call.response is None:
            return self._unmatched(conn, req, incoming)
        data, close = render_response(call.response, incoming.method == "HEAD", incoming.wants_close)
        # Logged before answering: once the client has its answer, the log already says so.
        self.events.write("served", seq=call.seq, method=req.method, url=req.url, outcome=f"response {call.response.status}")
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
                approx = "the connection was accepted, then never answered (a dropped SYN needs a closed route)"
        elif kind == "tls" and tls_pending:
            outcome = "tls handshake failure"
        else:
            outcome = "reset"
            if kind != "reset":
                approx = f"recorded {kind}, emulated as a TCP reset: the host also answers other calls"
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
    ap.add_argument("--bind", default="0.0.0.0")
    args = ap.parse_args(argv)
    with open(args.calls, encoding="utf-8") as fh:
        doc = json.load(fh)
    server = ReplayServer(doc, args.certs, EventLog(args.events), bind=args.bind)
    ports = server.start()
    signal.signal(signal.SIGHUP, lambda *_: server.new_attempt())
    signal.signal(signal.SIGTERM, lambda *_: server.stop.set())
    print("READY " + json.dumps(sorted(ports)), flush=True)
    while not server.stop.wait(1.0):
        pass
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

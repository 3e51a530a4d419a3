"""`--debugger`'s port: replay itself listens on 127.0.0.1 and relays each client to the debugger
inside the debuggee's container through the engine (engine/relay.py: an exec running
templates/debugger/relay.pl). The engine publishes nothing, so no engine version opens the port
to the LAN, and the debuggee keeps the network an attempt has (none, or the HTTP replay's).

A client that connects before the debugger listens waits here until it does (`ready()`), so the
first client is never reset; `close()` ends every relay and the listener.
"""
from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Callable

from ..engine import LABEL, Channel, Engine, RunSpec
from ..errors import ImageLacks, ReplayError, UsageError
from ..resources import templates_dir

POLL_S = 0.2  # how often the container's listening sockets are read while the debugger starts
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column


_MAIN_THREADS_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def thread(target: Callable[..., None], *args: object, name: str) -> None:
    """A daemon thread that leaves Ctrl-C, SIGTERM and SIGHUP to the main thread: one such signal
    taken by a thread blocked in accept() or recv() would wait there, unseen, while the main
    thread's wait on the debuggee goes on."""
    def run() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, _MAIN_THREADS_SIGNALS)
        target(*args)
    threading.Thread(target=run, name=name, daemon=True).start()


def relay_argv(port: int) -> tuple[str, ...]:
    """The program the engine runs in the debuggee for one client: relay.pl, given as its text."""
    script = (templates_dir() / "debugger" / "relay.pl").read_text(encoding="utf-8")
    return ("perl", "-e", script, str(port))


# what relay.pl uses, asked of the image (sh is in every base: the image facts' probe runs it too)
_RELAY_PROBE = "command -v perl >/dev/null 2>&1 && perl -MIO::Socket::INET -MIO::Select -e 1"


def require_relay(engine: Engine, image: str, label: str) -> None:
    """The debuggee's image runs relay.pl (perl is essential on Debian and Ubuntu, absent from Alpine
    and from some Fedora and Arch images); ImageLacks (exit 2) when not, before the command runs: a
    debuggee no client can reach is no use."""
    res = engine.run(RunSpec(image=image, argv=("sh", "-c", _RELAY_PROBE), labels=((LABEL, label),), timeout_s=120))
    if res.exit_code != 0:
        raise ImageLacks(f"--debugger: this capsule's image has no perl (with IO::Socket::INET), which relays the "
                         f"debugger's port; --debugger needs it in the image (exit {res.exit_code} when asked)")


def listens(proc_net_tcp: str, port: int) -> bool:
    """Whether /proc/net/tcp (and tcp6) text shows a socket listening on `port`."""
    for line in proc_net_tcp.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[3] == _LISTEN and fields[1].rpartition(":")[2].upper() == f"{port:04X}":
            return True
    return False


def debugger_listens(engine: Engine, container: str, port: int) -> bool:
    """Read in the container (its own network namespace): False too while it does not run yet."""
    try:
        code, out = engine.exec(container, ["cat", "/proc/net/tcp", "/proc/net/tcp6"])
    except ReplayError:
        return False
    return listens(out.decode("ascii", "replace"), port)


class DebugPort:
    """127.0.0.1:port in this process; each client relayed through `connect()` once `ready()`.
    Port 0: one the system chooses, read back into `port`."""

    def __init__(self, port: int, connect: Callable[[], Channel]) -> None:
        self._connect = connect
        self._ready = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket | Channel] = set()
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._server.bind(("127.0.0.1", port))
        except OSError as exc:
            self._server.close()
            raise UsageError(f"--debugger-port {port}: 127.0.0.1:{port} cannot be listened on ({exc.strerror}); "
                             "choose another with --debugger-port N") from exc
        self.port: int = self._server.getsockname()[1]
        self._server.listen(16)
        thread(self._accept, name="debug-port")

    def ready(self) -> None:
        """The debugger listens in the container: waiting clients are relayed now."""
        self._ready.set()

    def close(self) -> None:
        self._closed.set()
        try:
            self._server.shutdown(socket.SHUT_RDWR)  # wakes accept()
        except OSError:
            pass
        self._server.close()
        with self._lock:
            ends, self._open = list(self._open), set()
        for end in ends:
            _close(end)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            thread(self._serve, client, name="debug-client")

    def _serve(self, client: socket.socket) -> None:
        if not self._keep(client):
            return
        while not self._ready.wait(POLL_S):
            if self._closed.is_set():
                return self._drop(client)
        try:
            channel = self._connect()
        except ReplayError:
            return self._drop(client)
        if not self._keep(channel):
            return self._drop(client)
        thread(self._upstream, client, channel, name="debug-up")
        try:
            while data := channel.receive():
                client.sendall(data)
        except OSError:
            pass
        finally:
            self._drop(client, channel)

    def _upstream(self, client: socket.socket, channel: Channel) -> None:
        try:
            while data := client.recv(65536):
                channel.send(data)
        except OSError:
            pass
        finally:
            self._drop(client, channel)

    def _keep(self, end: socket.socket | Channel) -> bool:
        with self._lock:
            if self._closed.is_set():
                _close(end)
                return False
            self._open.add(end)
            return True

    def _drop(self, *ends: socket.socket | Channel) -> None:
        for end in ends:
            with self._lock:
                self._open.discard(end)
            _close(end)


def _close(end: socket.socket | Channel) -> None:
    try:
        if isinstance(end, socket.socket):
            end.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        end.close()
    except OSError:
        pass

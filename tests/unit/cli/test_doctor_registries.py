"""doctor's registry probe: reached as builds reach it, trusting the extra CAs, naming the CA that issued
the certificate. A loopback HTTPS server with a certificate from a CA made here plays the intercepting proxy."""
from __future__ import annotations

import datetime
import functools
import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from runner.config import Settings
from runner.machine.doctor import _registry


def _cert(subject: str, issuer_key: ec.EllipticCurvePrivateKey | None, issuer: str | None,
          ca: bool) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer or subject)]))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256()), key


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(URL, the CA's PEM file)."""
    d = tmp_path_factory.mktemp("tls")
    ca, ca_key = _cert("replay-test-proxy-ca", None, None, ca=True)
    leaf, leaf_key = _cert("localhost", ca_key, "replay-test-proxy-ca", ca=False)
    (d / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (d / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM) + leaf_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(d / "www"))
    (d / "www").mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "leaf.pem")
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://localhost:{server.server_address[1]}/", d / "ca.crt"
    finally:
        server.shutdown()
        server.server_close()


def test_a_certificate_builds_would_not_trust_is_named_with_the_fix(https: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = https
    check = _registry(Settings(cache_dir=tmp_path, ca_files=()), "npm registry", url)
    assert check.status == "warn" and "not trusted" in check.detail
    assert check.fix is not None and "REPLAY_CA_CERTS" in check.fix


def test_through_the_extra_ca(https: tuple[str, Path], tmp_path: Path) -> None:
    url, ca = https
    check = _registry(Settings(cache_dir=tmp_path, ca_files=(ca,)), "npm registry", url)
    assert check.status == "ok", check
    assert "issued by replay-test-proxy-ca" in check.detail and f"trusted through the extra CA {ca}" in check.detail


def test_nothing_answering_warns_with_the_setting_to_change(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    check = _registry(Settings(cache_dir=tmp_path, ca_files=()), "PyPI index", f"http://127.0.0.1:{port}/simple/")
    assert check.status == "warn" and "unreachable" in check.detail
    assert check.fix is not None and "REPLAY_PYPI_INDEX" in check.fix

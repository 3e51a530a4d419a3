"""The per-replay CA and its host certificates."""
from __future__ import annotations

import datetime as dt
import ssl
import threading
import socket

from cryptography import x509

from runner.httpreplay.ca import ReplayCA


def test_ca_is_a_ca_and_its_pem_holds_no_key() -> None:
    ca = ReplayCA("abc")
    cert = x509.load_pem_x509_certificate(ca.cert_pem)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert b"PRIVATE KEY" not in ca.cert_pem
    assert "replay CA abc" in cert.subject.rfc4514_string()


def test_leaf_names_its_host_and_is_signed_by_the_ca() -> None:
    ca = ReplayCA("abc")
    issued = ca.issue("api.example.com")
    leaf = x509.load_pem_x509_certificate(issued.cert_pem)
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["api.example.com"]
    leaf.verify_directly_issued_by(ca.certificate)
    assert b"PRIVATE KEY" in issued.key_pem


def test_validity_covers_a_recorded_clock_years_away() -> None:
    leaf = x509.load_pem_x509_certificate(ReplayCA("x").issue("h.example").cert_pem)
    for year in (2003, 2026, 2080):
        when = dt.datetime(year, 6, 1, tzinfo=dt.UTC)
        assert leaf.not_valid_before_utc <= when <= leaf.not_valid_after_utc


def test_openssl_verifies_a_tls_handshake_against_the_ca(tmp_path) -> None:
    ca = ReplayCA("x")
    issued = ca.issue("api.example.com")
    (tmp_path / "c.pem").write_bytes(issued.cert_pem)
    (tmp_path / "k.pem").write_bytes(issued.key_pem)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    client_ctx = ssl.create_default_context(cadata=ca.cert_pem.decode())
    client_ctx.verify_flags |= ssl.VERIFY_X509_STRICT  # what Python 3.13 turns on by default
    a, b = socket.socketpair()
    t = threading.Thread(target=lambda: server_ctx.wrap_socket(a, server_side=True).close())
    t.start()
    tls = client_ctx.wrap_socket(b, server_hostname="api.example.com")
    assert tls.getpeercert()["subjectAltName"] == (("DNS", "api.example.com"),)
    tls.close()
    t.join(5)

"""A certificate authority made for one replay, and a certificate per recorded host.

The replayed program trusts the CA (system store and the usual CA variables), so
its HTTPS calls to the recorded names reach the replay server unchanged. The CA's
private key lives only in this process's memory: it is never written to disk, so
it can enter neither the replayed container nor the sidecar (which gets the leaf
keys only).

Validity spans 2000-2100 on purpose: the replayed program runs under the recorded
clock (libfaketime), which may lie years before or after today.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_FROM = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
VALID_UNTIL = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class IssuedCert:
    host: str
    cert_pem: bytes
    key_pem: bytes  # the leaf's key, for the replay server only


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class ReplayCA:
    """A fresh CA (ECDSA P-256); issue() signs one server certificate per host."""

    def __init__(self, label: str) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"replay CA {label}"[:64]),
                          x509.NameAttribute(NameOID.ORGANIZATION_NAME, "replay (hermetic replay, not for real use)")])
        public = self._key.public_key()
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(self._key, hashes.SHA256())
        )

    @property
    def cert_pem(self) -> bytes:
        """The CA certificate: the only part of the CA a replayed container sees."""
        return self._cert.public_bytes(serialization.Encoding.PEM)

    @property
    def certificate(self) -> x509.Certificate:
        return self._cert

    def issue(self, host: str) -> IssuedCert:
        key = ec.generate_private_key(ec.SECP256R1())
        public = key.public_key()
        ca_ski = self._cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self._cert.subject).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
            .add_extension(x509.SubjectAlternativeName([_san(host)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=False, crl_sign=False,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        return IssuedCert(host, cert.public_bytes(serialization.Encoding.PEM), _pem_key(key))


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)

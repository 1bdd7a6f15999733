"""HTTPS for a table of phones (``thousand serve --lan --https``).

Browsers run a page's service worker (install to the home screen, reopen with the server
away) only on a secure origin: ``localhost``, or HTTPS with a certificate the phone
trusts. A table on a home Wi-Fi has no domain name for a public certificate, so the server
makes its own small authority, as mkcert does:

* **the table's authority** (``ca.pem``, key ``ca.key`` readable by this user alone): made
  once per machine, ten years, allowed to sign server certificates and nothing below them
  (path length 0). Each phone installs it once (the page offers ``/table-ca.crt``);
* **the server's certificate** (``server.pem``, ``server.key``) for this machine's LAN
  address, ``localhost`` and ``127.0.0.1``, signed by the authority, valid 397 days (below
  the 398 days browsers accept and iOS's 825), made again when it expires within a month or
  when the address changed.

Keys are ECDSA P-256. Files are written atomically (a temporary file renamed into place),
keys with mode 0600 from their first byte.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.untrusted import ensure_private_folder, write_durably

__all__ = [
    "CA_DAYS",
    "RENEW_DAYS",
    "SERVER_DAYS",
    "TableCertificates",
    "authority_der",
    "default_folder",
    "fingerprint",
    "table_certificates",
]

CA_DAYS = 3650
SERVER_DAYS = 397
RENEW_DAYS = 30  # a server certificate this close to its end is made again


@dataclass(frozen=True)
class TableCertificates:
    """The files of :func:`table_certificates`, and the authority's SHA-256 fingerprint
    (what a player compares when installing it)."""

    ca: Path
    cert: Path
    key: Path
    fingerprint: str


def default_folder() -> Path:
    """``$XDG_STATE_HOME/thousand/tls`` (default ``~/.local/state/thousand/tls``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "thousand" / "tls"


def _names(address: str) -> list:
    from cryptography import x509

    out: list = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        out.append(x509.DNSName(address))
    else:
        if ip != ipaddress.ip_address("127.0.0.1"):
            out.append(x509.IPAddress(ip))
    return out


def table_certificates(address: str, folder: Path | None = None) -> TableCertificates:
    """The authority and a server certificate for ``address`` (an IP address or a host
    name) in ``folder`` (default :func:`default_folder`), made where missing, stale or for
    another address; a :class:`StateError` in one line when the folder or its files cannot
    be used."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as exc:
        raise StateError(_("--https needs the web extra ({0}): pip install -e '.[web]'").format(exc.name)) from None
    folder = Path(folder) if folder else default_folder()
    ca_pem, ca_key, cert_pem, cert_key = (folder / n for n in ("ca.pem", "ca.key", "server.pem", "server.key"))
    now = dt.datetime.now(dt.UTC)
    pem = serialization.Encoding.PEM
    key_bytes = {
        "encoding": pem,
        "format": serialization.PrivateFormat.PKCS8,
        "encryption_algorithm": serialization.NoEncryption(),
    }
    try:
        ensure_private_folder(folder)
        if ca_pem.exists() and ca_key.exists():
            ca = x509.load_pem_x509_certificate(ca_pem.read_bytes())
            ca_private = serialization.load_pem_private_key(ca_key.read_bytes(), password=None)
        else:
            ca_private = ec.generate_private_key(ec.SECP256R1())
            name = x509.Name(
                [
                    x509.NameAttribute(NameOID.ORGANIZATION_NAME, "thousand"),
                    x509.NameAttribute(NameOID.COMMON_NAME, f"thousand table authority ({socket.gethostname()[:30]})"),
                ]
            )
            ca = (
                x509.CertificateBuilder()
                .subject_name(name)
                .issuer_name(name)
                .public_key(ca_private.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=CA_DAYS))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(
                    x509.KeyUsage(
                        digital_signature=False,
                        content_commitment=False,
                        key_encipherment=False,
                        data_encipherment=False,
                        key_agreement=False,
                        key_cert_sign=True,
                        crl_sign=True,
                        encipher_only=False,
                        decipher_only=False,
                    ),
                    critical=True,
                )
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_private.public_key()), critical=False)
                .sign(ca_private, hashes.SHA256())
            )
            write_durably(ca_key, ca_private.private_bytes(**key_bytes), 0o600)
            write_durably(ca_pem, ca.public_bytes(pem), 0o644)
            cert_pem.unlink(missing_ok=True)  # signed by an authority that is gone
        names = _names(address)
        if not _current(cert_pem, cert_key, ca, names, now):
            key = ec.generate_private_key(ec.SECP256R1())
            cert = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, address)]))
                .issuer_name(ca.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=SERVER_DAYS))
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_private.public_key()), critical=False
                )
                .sign(ca_private, hashes.SHA256())
            )
            write_durably(cert_key, key.private_bytes(**key_bytes), 0o600)
            write_durably(cert_pem, cert.public_bytes(pem), 0o644)
    except (OSError, ValueError) as exc:
        raise StateError(
            _("cannot make or read the table's certificates in {0}: {1}").format(
                folder, getattr(exc, "strerror", None) or exc
            )
        ) from None
    return TableCertificates(ca_pem, cert_pem, cert_key, fingerprint(ca_pem))


def _current(cert_pem: Path, cert_key: Path, ca, names: list, now: dt.datetime) -> bool:
    """Whether the server certificate on disk is the authority's, for ``names``, and not
    within :data:`RENEW_DAYS` of its end."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    if not (cert_pem.exists() and cert_key.exists()):
        return False
    cert = x509.load_pem_x509_certificate(cert_pem.read_bytes())
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):  # another authority's, or not a signature it made
        return False
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(sans) == set(names) and cert.not_valid_after_utc - now > dt.timedelta(days=RENEW_DAYS)


def authority_der(ca_pem: Path) -> bytes:
    """The authority's certificate in DER, the form phones install from a download."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    return x509.load_pem_x509_certificate(ca_pem.read_bytes()).public_bytes(serialization.Encoding.DER)


def fingerprint(ca_pem: Path) -> str:
    """The SHA-256 fingerprint of a certificate, as ``AB:CD:…`` (what phones show)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    return x509.load_pem_x509_certificate(ca_pem.read_bytes()).fingerprint(hashes.SHA256()).hex(":").upper()

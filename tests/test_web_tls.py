"""HTTPS for a table of phones (``thousand serve --lan --https``, thousand.web.tls): the
table's authority and the server's certificate checked with the cryptography package's own
verification, the files and their modes, remaking on a new address, a real server whose
certificate a client that trusts only the table's authority accepts (and a client with the
system's authorities refuses), and the authority offered to the phones."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

x509 = pytest.importorskip("cryptography.x509")
pytest.importorskip("starlette")
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID  # noqa: E402

from thousand.base.errors import StateError  # noqa: E402
from thousand.web.tls import SERVER_DAYS, table_certificates  # noqa: E402


def load(path):
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_the_tables_authority_signs_a_certificate_for_the_lan_address(tmp_path):
    got = table_certificates("192.0.2.20", tmp_path / "tls")
    ca, cert = load(got.ca), load(got.cert)
    cert.verify_directly_issued_by(ca)  # raises unless the authority signed it
    ca.verify_directly_issued_by(ca)  # self-signed
    bc = ca.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert bc.ca and bc.path_length == 0
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address("192.0.2.20"),
        ipaddress.ip_address("127.0.0.1"),
    }
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    days = (cert.not_valid_after_utc - cert.not_valid_before_utc) / dt.timedelta(days=1)
    assert SERVER_DAYS <= days < 398  # browsers refuse longer server certificates
    assert got.fingerprint == ca.fingerprint(hashes.SHA256()).hex(":").upper()
    for key in ("ca.key", "server.key"):
        assert (tmp_path / "tls" / key).stat().st_mode & 0o777 == 0o600
    assert not list((tmp_path / "tls").glob(".*tmp"))


def test_certificates_are_kept_and_remade_for_another_address(tmp_path):
    first = table_certificates("192.0.2.20", tmp_path)
    ca, cert = first.ca.read_bytes(), first.cert.read_bytes()
    again = table_certificates("192.0.2.20", tmp_path)
    assert again.ca.read_bytes() == ca and again.cert.read_bytes() == cert
    moved = table_certificates("192.0.2.21", tmp_path)  # the laptop got another address
    assert moved.ca.read_bytes() == ca and moved.cert.read_bytes() != cert
    load(moved.cert).verify_directly_issued_by(load(moved.ca))
    named = table_certificates("table.local", tmp_path)
    sans = load(named.cert).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "table.local" in sans.get_values_for_type(x509.DNSName)
    # a server certificate of another authority (the authority's files replaced) is remade
    other = table_certificates("192.0.2.21", tmp_path / "other")
    first.cert.write_bytes(other.cert.read_bytes())
    load(table_certificates("192.0.2.21", tmp_path).cert).verify_directly_issued_by(load(first.ca))


def test_a_broken_authority_is_one_line(tmp_path):
    table_certificates("192.0.2.20", tmp_path)
    (tmp_path / "ca.pem").write_text("not a certificate")
    with pytest.raises(StateError) as err:
        table_certificates("192.0.2.20", tmp_path)
    assert "table's certificates" in str(err.value) and "\n" not in str(err.value)
    from click.testing import CliRunner

    from thousand.cli import main

    r = CliRunner().invoke(main, ["serve", "--https", "--certs", str(tmp_path), "--games", str(tmp_path / "g")])
    assert r.exit_code == 2 and r.output.startswith("thousand: error: cannot make or read the table's certificates")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_served_page_is_https_with_the_tables_authority(tmp_path):
    """A real ``thousand serve --host 127.0.0.1 --https``: a client trusting only the table's
    authority talks to it (the certificate names 127.0.0.1), one with the system's
    authorities refuses it, and the authority it offers is the one on disk."""
    port = _port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "thousand.cli", "serve", "--https", "--port", str(port)]
        + ["--certs", str(tmp_path / "tls"), "--games", str(tmp_path / "g")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first, second = proc.stdout.readline(), proc.stdout.readline()
        assert f"https://localhost:{port}/" in first
        ca = load(tmp_path / "tls" / "ca.pem")
        assert ca.fingerprint(hashes.SHA256()).hex(":").upper() in second and "table-ca.crt" in second
        trusting = ssl.create_default_context(cafile=str(tmp_path / "tls" / "ca.pem"))
        for _k in range(100):
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{port}/api/server", timeout=2, context=trusting) as r:
                    info = json.loads(r.read())
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        assert info["trusted"] is True and info["lan_url"] is None
        assert info["authority"]["url"] == "/table-ca.crt"
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/table-ca.crt", context=trusting) as r:
            assert x509.load_der_x509_certificate(r.read()) == ca
            assert r.headers["Content-Type"] == "application/x-x509-ca-cert"
        with pytest.raises(urllib.error.URLError) as err:
            urllib.request.urlopen(
                f"https://127.0.0.1:{port}/api/server", timeout=5, context=ssl.create_default_context()
            )
        assert "CERTIFICATE_VERIFY_FAILED" in str(err.value)
    finally:
        proc.terminate()
        proc.wait(10)


def test_without_https_there_is_no_authority_to_fetch(tmp_path):
    from webclient import AppClient

    from thousand.web.app import create_app

    with AppClient(create_app(tmp_path / "g"), raise_server_exceptions=False) as c:
        r = c.get("/table-ca.crt")
        assert r.status_code == 404 and "--https" in r.json()["error"]
        assert "authority" not in c.get("/api/server").json()

"""A throwaway PostgreSQL cluster (initdb into a temp dir, own port) for tests that stop it or need TLS.

Runs the server binaries as the ``postgres`` OS user through ``runuser`` (the server refuses root).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PG_BIN = Path(os.environ.get("LCM_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


class ClusterUnavailable(Exception):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Tls:
    ca_pem: Path
    other_ca_pem: Path


class Cluster:
    def __init__(self, tls_names: tuple[str, ...] = ()) -> None:
        if os.geteuid() != 0 or shutil.which("runuser") is None or not (PG_BIN / "initdb").exists():
            raise ClusterUnavailable("needs root, runuser and the PostgreSQL server binaries")
        self.dir = Path(tempfile.mkdtemp(prefix="lcm-pgcluster-"))
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = self.dir / "data"
        self.port = _free_port()
        self.tls: Tls | None = None
        self._as_postgres(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                          "-E", "UTF8", "--no-sync", "--no-instructions")
        conf = [f"port = {self.port}", "listen_addresses = '127.0.0.1'", f"unix_socket_directories = '{self.dir}'",
                "fsync = off", "full_page_writes = off", "max_connections = 30"]
        if tls_names:
            self.tls = self._make_certs(tls_names)
            conf += ["ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'"]
        with open(self.data / "postgresql.conf", "a") as f:
            f.write("\n".join(conf) + "\n")
        self.start()
        self._as_postgres(str(PG_BIN / "psql"), "-h", str(self.dir), "-p", str(self.port), "-U", "postgres",
                          "-d", "postgres", "-qc", "CREATE EXTENSION pg_trgm")

    def url(self, host: str = "127.0.0.1") -> str:
        return f"postgresql://postgres@{host}:{self.port}/postgres"

    def _as_postgres(self, *cmd: str) -> None:
        done = subprocess.run(["runuser", "-u", "postgres", "--", *cmd], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            raise ClusterUnavailable(f"{Path(cmd[0]).name} failed: {done.stderr.strip()[-300:]}")

    def start(self) -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), "-w",
                          "-t", "60", "start")

    def stop(self) -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def destroy(self) -> None:
        try:
            self.stop()
        except ClusterUnavailable:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def _make_certs(self, names: tuple[str, ...]) -> Tls:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        now = dt.datetime.now(dt.UTC)

        def name(cn: str) -> x509.Name:
            return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

        def ca(cn: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
            key = ec.generate_private_key(ec.SECP256R1())
            cert = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(name(cn))
                    .public_key(key.public_key()).serial_number(x509.random_serial_number())
                    .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
                    .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                    .sign(key, hashes.SHA256()))
            return key, cert

        ca_key, ca_cert = ca("LCM test CA")
        _, other_cert = ca("Some other CA")
        server_key = ec.generate_private_key(ec.SECP256R1())
        sans: list[x509.GeneralName] = []
        for n in names:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(n)))
            except ValueError:
                sans.append(x509.DNSName(n))
        server_cert = (x509.CertificateBuilder().subject_name(name(names[0])).issuer_name(ca_cert.subject)
                       .public_key(server_key.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
                       .add_extension(x509.SubjectAlternativeName(sans), critical=False)
                       .sign(ca_key, hashes.SHA256()))
        pem = serialization.Encoding.PEM
        (self.data / "server.crt").write_bytes(server_cert.public_bytes(pem))
        (self.data / "server.key").write_bytes(server_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        for f in ("server.crt", "server.key"):
            shutil.chown(self.data / f, "postgres", "postgres")
        os.chmod(self.data / "server.key", 0o600)
        certs = self.dir / "client"  # removed with the cluster (a directory of its own outlived it)
        certs.mkdir()
        (certs / "ca.pem").write_bytes(ca_cert.public_bytes(pem))
        (certs / "other-ca.pem").write_bytes(other_cert.public_bytes(pem))
        return Tls(certs / "ca.pem", certs / "other-ca.pem")


@contextmanager
def throwaway() -> Iterator[Cluster]:
    """A cluster for one test module, destroyed after it; skipped with the reason when it cannot be made here
    (failed under ``CI=true``)."""
    from tests.conftest import skip_or_fail

    try:
        made = Cluster()
    except ClusterUnavailable as exc:
        skip_or_fail(f"throwaway cluster unavailable: {exc}")
        raise
    try:
        yield made
    finally:
        made.destroy()

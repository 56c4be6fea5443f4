"""Connection policy: the resolved ``postgresql.*`` settings turned into libpq parameters.

The URL may not carry a query or fragment, so nothing in it (nor any ``PG*``
variable) can weaken TLS: ``sslmode``, ``sslrootcert``, the session options
and the application name are always set explicitly here. TLS is verified
(``verify-full``) against ``postgresql.ca_file``; plaintext is accepted only
with ``postgresql.allow_plaintext_loopback`` and only to a loopback address
or a Unix socket.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from lcm_framework.plugin_api import ConfigError

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config

APPLICATION_NAME = "lcm"
SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class PgSettings:
    """Everything the runtime needs, already checked."""

    params: dict[str, Any]
    schema: str
    pool_size: int
    acquire_timeout_s: float
    idle_timeout_s: float
    statement_timeout_ms: int
    idle_in_transaction_timeout_ms: int
    home: Path

    @property
    def options(self) -> str:
        return (
            f"-c statement_timeout={self.statement_timeout_ms} "
            f"-c idle_in_transaction_session_timeout={self.idle_in_transaction_timeout_ms} "
            f"-c TimeZone=UTC -c search_path={self.schema},public"
        )

    def connect_kwargs(self) -> dict[str, Any]:
        return {**self.params, "options": self.options, "application_name": APPLICATION_NAME}


def _is_loopback(host: str) -> bool:
    if host.startswith("/") or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_url(url: str) -> dict[str, Any]:
    """Split a ``postgresql://`` URL into libpq keywords; refuse query, fragment and other schemes."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ConfigError("postgresql.url is not a valid URL") from None
    if parts.scheme not in {"postgresql", "postgres"}:
        raise ConfigError("postgresql.url must start with postgresql://")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ConfigError(
            "postgresql.url may not carry a query or fragment (TLS and session options come from "
            "postgresql.* settings)"
        )
    host = unquote(parts.hostname or "") if parts.hostname else ""
    params: dict[str, Any] = {"host": host or "/var/run/postgresql", "port": port or 5432}
    if parts.username:
        params["user"] = unquote(parts.username)
    if parts.password:
        params["password"] = unquote(parts.password)
    dbname = unquote(parts.path.lstrip("/"))
    if dbname:
        params["dbname"] = dbname
    return params


def tls_params(host: str, ca_file: str | None, allow_plaintext: bool) -> dict[str, Any]:
    """``verify-full`` against the CA, or plaintext to loopback/socket when explicitly allowed."""
    if ca_file:
        if not Path(ca_file).is_file():
            raise ConfigError("postgresql.ca_file does not name a readable file")
        return {"sslmode": "verify-full", "sslrootcert": str(Path(ca_file).resolve())}
    if allow_plaintext:
        if not _is_loopback(host):
            raise ConfigError(
                "postgresql.allow_plaintext_loopback only allows a loopback address or a Unix socket; "
                "set postgresql.ca_file (LCM_POSTGRES_CA_FILE) to connect over verified TLS"
            )
        return {"sslmode": "disable"}
    raise ConfigError(
        "PostgreSQL needs verified TLS: set postgresql.ca_file (LCM_POSTGRES_CA_FILE), or for a local "
        "server postgresql.allow_plaintext_loopback = true"
    )


def load_settings(config: Config) -> PgSettings:
    url = config.get("postgresql.url")
    if not url:
        raise ConfigError("storage.backend=postgresql needs postgresql.url (LCM_POSTGRES_URL)")
    schema = str(config.get("postgresql.schema"))
    if not SCHEMA_NAME.match(schema):
        raise ConfigError("postgresql.schema must be a lower-case identifier ([a-z_][a-z0-9_]*)")
    params = parse_url(str(url))
    params.update(
        tls_params(params["host"], config.get("postgresql.ca_file"),
                   bool(config.get("postgresql.allow_plaintext_loopback")))
    )
    acquire = float(config.get("postgresql.acquire_timeout_s"))
    params["connect_timeout"] = max(1, int(acquire))
    return PgSettings(
        params=params,
        schema=schema,
        pool_size=int(config.get("postgresql.pool_size")),
        acquire_timeout_s=acquire,
        idle_timeout_s=float(config.get("postgresql.idle_timeout_s")),
        statement_timeout_ms=int(config.get("postgresql.statement_timeout_ms")),
        idle_in_transaction_timeout_ms=int(config.get("postgresql.idle_in_transaction_timeout_ms")),
        home=config.home,
    )

"""URL and TLS policy: what connection parameters a configuration may produce, and what it may not."""

from __future__ import annotations

from pathlib import Path

import pytest
from lcm_postgres.settings import load_settings, parse_url, tls_params

from lcm_framework.config import load_config
from lcm_framework.errors import ConfigError
from lcm_framework.kernel.plugins import build_plugins


def settings(tmp_path: Path, **values: str) -> object:
    config = load_config(cwd=tmp_path, env={"LCM_HOME": str(tmp_path / "h")},
                         overrides={"storage.backend": "postgresql", **values}, plugins=build_plugins())
    return load_settings(config)


@pytest.mark.parametrize("url", [
    "postgresql://u@db.example/lcm?sslmode=disable",
    "postgresql://u@db.example/lcm?",
    "postgresql://u@db.example/lcm#frag",
    "postgresql://u@db.example/lcm?options=-csearch_path%3Devil",
])
def test_query_and_fragment_overrides_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="query or fragment"):
        parse_url(url)


def test_other_schemes_and_bad_ports_are_refused() -> None:
    with pytest.raises(ConfigError):
        parse_url("mysql://u@h/db")
    with pytest.raises(ConfigError):
        parse_url("postgresql://u@h:notaport/db")


def test_url_parts_are_decoded() -> None:
    params = parse_url("postgresql://us%40er:p%2Fw@db.example:6543/my%20db")
    assert params == {"host": "db.example", "port": 6543, "user": "us@er", "password": "p/w", "dbname": "my db"}


def test_tls_is_verify_full_against_the_ca(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    assert tls_params("db.example", str(ca), False) == {"sslmode": "verify-full", "sslrootcert": str(ca)}
    # an explicit CA wins over the plaintext allowance, even on loopback
    assert tls_params("127.0.0.1", str(ca), True)["sslmode"] == "verify-full"


def test_missing_ca_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ca_file"):
        tls_params("db.example", str(tmp_path / "absent.pem"), False)


def test_without_ca_a_remote_server_is_refused() -> None:
    with pytest.raises(ConfigError, match="verified TLS"):
        tls_params("db.example", None, False)
    with pytest.raises(ConfigError, match="loopback"):
        tls_params("db.example", None, True)
    with pytest.raises(ConfigError, match="loopback"):
        tls_params("10.0.0.5", None, True)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "/var/run/postgresql"])
def test_plaintext_only_to_loopback_or_socket_when_allowed(host: str) -> None:
    assert tls_params(host, None, True) == {"sslmode": "disable"}
    with pytest.raises(ConfigError):
        tls_params(host, None, False)


def test_resolved_settings_pin_session_options(tmp_path: Path) -> None:
    s = settings(tmp_path, **{"postgresql.url": "postgresql://u:secret@127.0.0.1/lcm",
                              "postgresql.allow_plaintext_loopback": "true",
                              "postgresql.statement_timeout_ms": "1234"})
    kwargs = s.connect_kwargs()  # type: ignore[attr-defined]
    assert kwargs["application_name"] == "lcm" and kwargs["sslmode"] == "disable"
    assert "statement_timeout=1234" in kwargs["options"] and "TimeZone=UTC" in kwargs["options"]
    assert "idle_in_transaction_session_timeout=" in kwargs["options"]


def test_missing_url_and_bad_schema_name_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="LCM_POSTGRES_URL"):
        settings(tmp_path)
    with pytest.raises(ConfigError, match="schema"):
        settings(tmp_path, **{"postgresql.url": "postgresql://u@127.0.0.1/x",
                              "postgresql.allow_plaintext_loopback": "true", "postgresql.schema": 'x"; drop'})


def test_selecting_postgresql_never_falls_back_to_sqlite(tmp_path: Path) -> None:
    """An unreachable server is a StorageUnavailableError naming no URL or credential."""
    from lcm_framework.errors import StorageUnavailableError
    from lcm_framework.storage.selection import open_backend

    config = load_config(cwd=tmp_path, env={"LCM_HOME": str(tmp_path / "h")}, overrides={
        "storage.backend": "postgresql", "postgresql.url": "postgresql://bob:hunter2@127.0.0.1:1/lcm",
        "postgresql.allow_plaintext_loopback": "true", "postgresql.acquire_timeout_s": "1"}, plugins=build_plugins())
    with pytest.raises(StorageUnavailableError) as info:
        open_backend(config, plugins=build_plugins(config.env))
    text = str(info.value)
    assert "hunter2" not in text and "bob" not in text and "127.0.0.1" not in text and "postgresql/" in text
    assert not list((tmp_path / "h").glob("**/*.db")) and not list((tmp_path / "h").glob("**/*.sqlite*"))


def test_the_shipped_reference_grant_script_is_the_rendered_one() -> None:
    from importlib import resources

    from lcm_postgres import grants

    shipped = resources.files("lcm_postgres").joinpath("reference", "runtime-grants.sql").read_text("utf-8")
    assert shipped == grants.render("lcm_runtime", "lcm")
    with pytest.raises(ConfigError):
        grants.render('x"; DROP TABLE y; --', "lcm")

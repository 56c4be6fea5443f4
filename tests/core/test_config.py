"""Configuration: precedence, provenance, refusal of bad input, masking, writing files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from lcm_framework.config import load_config, mask_secret
from lcm_framework.config.files import set_key
from lcm_framework.errors import ConfigError
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import run_lcm


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".lcm").mkdir(parents=True)
    return root


def test_precedence_defaults_global_project_env_flags(tmp_path: Path, lcm_env: Path) -> None:
    root = _project(tmp_path)
    key = "compaction.fresh_tail_count"
    assert load_config(project=root, plugins=build_plugins()).source(key) == "default"

    set_key(lcm_env / "config.toml", key, 11)
    cfg = load_config(project=root, plugins=build_plugins())
    assert (cfg.get(key), cfg.source(key).split(":")[0]) == (11, "global")

    set_key(root / ".lcm" / "config.toml", key, 12)
    cfg = load_config(project=root, plugins=build_plugins())
    assert (cfg.get(key), cfg.source(key).split(":")[0]) == (12, "project")

    env = {"LCM_HOME": str(lcm_env), "LCM_COMPACTION_FRESH_TAIL_COUNT": "13"}
    cfg = load_config(project=root, env=env, plugins=build_plugins(env))
    assert (cfg.get(key), cfg.source(key)) == (13, "env:LCM_COMPACTION_FRESH_TAIL_COUNT")

    cfg = load_config(project=root, env=env, overrides={key: "14"}, plugins=build_plugins(env))
    assert (cfg.get(key), cfg.source(key)) == (14, "flag")


def test_env_aliases_from_the_spec(tmp_path: Path) -> None:
    env = {
        "LCM_HOME": str(tmp_path / "h"),
        "LCM_STORAGE_BACKEND": "postgresql",
        "LCM_POSTGRES_URL": "postgresql://lcm:hunter2@db.example:5432/lcm",
        "LCM_SUMMARY_MODEL": "anthropic/claude-3-5-haiku-latest",
    }
    cfg = load_config(project=tmp_path, env=env, plugins=build_plugins(env))
    assert cfg.get("storage.backend") == "postgresql"
    assert cfg.get("summarizer.model") == "anthropic/claude-3-5-haiku-latest"
    assert "hunter2" not in cfg.display("postgresql.url")
    assert "db.example" in cfg.display("postgresql.url")


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"LCM_COMPACTION_FRESH_TAIL_COUNT": "many"}, "compaction.fresh_tail_count"),
        ({"LCM_IMPORT_BATCH_SIZE": "5000"}, "<= 1000"),
        ({"LCM_DAEMON_AUTOSTART": "perhaps"}, "true or false"),
        ({"LCM_STORAGE_FTS_TIER": "fts9"}, "one of auto, fts5, fts4, like"),
    ],
)
def test_bad_values_name_key_source_and_allowed(tmp_path: Path, env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(project=tmp_path, env={"LCM_HOME": str(tmp_path / "h"), **env}, plugins=build_plugins(env))
    message = str(err.value)
    assert fragment in message
    assert "environment LCM_" in message


def test_unknown_key_in_file_is_refused_with_suggestion(tmp_path: Path, lcm_env: Path) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text("[compaction]\nfresh_tail_cont = 3\n")
    with pytest.raises(ConfigError, match=r"did you mean 'compaction\.fresh_tail_count'"):
        load_config(project=tmp_path, plugins=build_plugins())


def test_invalid_toml_is_a_config_error(tmp_path: Path, lcm_env: Path) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text("[compaction\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(project=tmp_path, plugins=build_plugins())


def test_set_key_keeps_other_keys_and_values(tmp_path: Path) -> None:
    path = tmp_path / "c" / "config.toml"
    path.parent.mkdir()
    path.write_text('[daemon]\nport = 4000\n\n[summarizer]\nmodel = "openai/gpt-4o-mini"\n')
    set_key(path, "daemon.autostart", False)
    data = tomllib.loads(path.read_text())
    assert data == {"daemon": {"port": 4000, "autostart": False}, "summarizer": {"model": "openai/gpt-4o-mini"}}
    assert path.stat().st_mode & 0o777 == 0o600
    set_key(path, "summarizer.model", None)
    assert tomllib.loads(path.read_text()) == {"daemon": {"port": 4000, "autostart": False}}


def test_mask_secret_hides_credentials() -> None:
    assert mask_secret("postgresql://user:pw@host:5432/db") == "postgresql://***@host:5432/***"
    assert mask_secret("sk-ant-0123456789abcdef") == "sk-a***"
    assert mask_secret("short") == "***"


def test_cli_config_round_trip(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert run_lcm("config", "set", "daemon.port", "4111", "--project", cwd=root).returncode == 0
    got = run_lcm("config", "get", "daemon.port", "--show-source", cwd=root)
    assert got.stdout.startswith("4111") and "project:" in got.stdout
    listing = json.loads(run_lcm("config", "list", "--json", cwd=root).stdout)
    assert {"key": "daemon.port", "value": "4111"}.items() <= next(
        r for r in listing if r["key"] == "daemon.port"
    ).items()
    flag = run_lcm(
        "--set", "daemon.port=5000", "config", "get", "daemon.port", "--effective", "--show-source", cwd=root
    )
    assert flag.stdout.split() == ["5000", "(flag)"]
    env = run_lcm("config", "get", "daemon.port", "--effective", cwd=root, env={"LCM_DAEMON_PORT": "6000"})
    assert env.stdout.strip() == "6000"
    files = run_lcm("config", "get", "daemon.port", "--show-source", cwd=root, env={"LCM_DAEMON_PORT": "6000"})
    assert files.stdout.startswith("4111") and "project:" in files.stdout
    assert run_lcm("config", "unset", "daemon.port", "--project", cwd=root).returncode == 0
    assert run_lcm("config", "get", "daemon.port", cwd=root).stdout.strip() == "3737"


def test_cli_refuses_unknown_key_and_bad_value(tmp_path: Path) -> None:
    bad_key = run_lcm("config", "set", "daemon.prot", "1", cwd=tmp_path)
    assert bad_key.returncode == 2 and "did you mean 'daemon.port'" in bad_key.stderr
    bad_value = run_lcm("config", "set", "daemon.port", "99999", cwd=tmp_path)
    assert bad_value.returncode == 2 and "<= 65535" in bad_value.stderr
    assert "Traceback" not in bad_key.stderr + bad_value.stderr


def test_cli_never_prints_secret(tmp_path: Path) -> None:
    env = {"LCM_POSTGRES_URL": "postgresql://lcm:s3cr3t-pass@db:5432/lcm"}
    out = run_lcm("config", "list", cwd=tmp_path, env=env)
    assert "s3cr3t-pass" not in out.stdout + out.stderr
    assert "env:LCM_POSTGRES_URL" in out.stdout
    written = run_lcm("config", "set", "postgresql.url", "postgresql://lcm:s3cr3t-pass@db/lcm", cwd=tmp_path)
    assert written.returncode == 0 and "s3cr3t-pass" not in written.stdout and "db" in written.stdout
    api = run_lcm("config", "set", "summarizer.api_base", "http://me:t0psecret@llm.local:8080/v1", cwd=tmp_path)
    assert "t0psecret" not in api.stdout and "llm.local:8080/v1" in api.stdout
    listed = run_lcm("config", "list", cwd=tmp_path)
    assert "t0psecret" not in listed.stdout and "s3cr3t-pass" not in listed.stdout

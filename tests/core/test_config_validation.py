"""What the configuration refuses in its value types (not per key), what its errors never echo, and that
``storage.backend`` names only a backend a loaded plugin provides."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from lcm_framework.config import Setting, load_config
from lcm_framework.config.registry import SettingsRegistry, collect_settings
from lcm_framework.errors import ConfigError
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import run_lcm

REGISTRY = collect_settings(build_plugins())
FLOAT_KEYS = sorted(key for key, setting in REGISTRY.items() if setting.kind is float)


def _load(tmp_path: Path, **overrides: str) -> None:
    load_config(project=tmp_path, env={"LCM_HOME": str(tmp_path / "h")}, overrides=overrides, plugins=build_plugins())


def test_every_float_key_is_checked() -> None:
    assert {"compaction.context_threshold", "memory.recall_min_score", "summarizer.temperature"} <= set(FLOAT_KEYS)


@pytest.mark.parametrize("key", FLOAT_KEYS)
@pytest.mark.parametrize("raw", ["nan", "NaN", "inf", "-inf", "1e400", "-1e999"])
def test_a_float_key_refuses_what_is_not_finite(tmp_path: Path, key: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=r"is invalid: not a finite number"):
        _load(tmp_path, **{key: raw})


@pytest.mark.parametrize("literal", ["nan", "+nan", "-nan", "inf", "+inf", "-inf"])
def test_a_float_key_in_a_file_refuses_what_is_not_finite(tmp_path: Path, lcm_env: Path, literal: str) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text(f"[memory]\nrecall_min_score = {literal}\n")
    with pytest.raises(ConfigError, match=r"memory.recall_min_score = .* \(from global file .*\) is invalid: "
                                          r"not a finite number"):
        load_config(project=tmp_path, plugins=build_plugins())


def test_float_keys_still_take_numbers(tmp_path: Path) -> None:
    config = load_config(project=tmp_path, env={"LCM_HOME": str(tmp_path / "h")},
                         overrides={"summarizer.temperature": "0.5", "memory.recall_min_score": "1"},
                         plugins=build_plugins())
    assert (config.get("summarizer.temperature"), config.get("memory.recall_min_score")) == (0.5, 1.0)


@pytest.mark.parametrize(("toml", "reason"), [
    ("fresh_tail_count = 3.5", "not an integer"),
    ("fresh_tail_count = inf", "not an integer"),
    ("fresh_tail_count = nan", "not an integer"),
    ("fresh_tail_count = 9223372036854775808", "out of range (64-bit integers only)"),
    ("fresh_tail_count = 1e300", "out of range (64-bit integers only)"),
    ("context_threshold = " + "9" * 400, "out of range"),
    ("context_threshold = [0.5]", "wrong type"),
    ("context_threshold = {a = 1}", "wrong type"),
    ("context_threshold = 1979-05-27", "wrong type"),
])
def test_wrong_numbers_in_a_file_are_refused(tmp_path: Path, lcm_env: Path, toml: str, reason: str) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text(f"[compaction]\n{toml}\n")
    with pytest.raises(ConfigError, match=rf"\(from global file .*\) is invalid: {re.escape(reason)}"):
        load_config(project=tmp_path, plugins=build_plugins())


def test_an_integral_float_is_an_integer(tmp_path: Path, lcm_env: Path) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text("[compaction]\nfresh_tail_count = 6.0\n")
    assert load_config(project=tmp_path, plugins=build_plugins()).get("compaction.fresh_tail_count") == 6


@pytest.mark.parametrize("text", ["a\x00b", "\ud800"])
def test_text_keys_refuse_nul_and_lone_surrogates(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="holds U\\+0000 or a lone surrogate"):
        _load(tmp_path, **{"prompts.override_dir": text})
    with pytest.raises(ConfigError, match="holds U\\+0000 or a lone surrogate"):
        _load(tmp_path, **{"security.sensitive_patterns": f"ok\n{text}"})


@pytest.mark.parametrize("document", [
    "[compaction]\nfresh_tail_count = " + "1" * 5000,  # beyond Python's integer-parsing limit
    "[compaction]\nfresh_tail_count = " + "[" * 20_000 + "]" * 20_000,  # deeper than the parser recurses
    "[compaction\n",
])
def test_a_file_that_cannot_be_read_as_toml_is_a_config_error(tmp_path: Path, lcm_env: Path, document: str) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text(document)
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_config(project=tmp_path, plugins=build_plugins())


SECRETS = [
    "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
    "xoxb-1234567890-abcdefghijklmnop",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "sk-proj-Q3vX9kLm2Rt7Yp4Wz8Nb",
    "https://admin:hunter2@db.internal/x",
    "Zx8Qp2Lr7Vt4Nk9Ws3Hd6Jf1",  # no known shape: high entropy
    "x" * 65,  # too long to print
]


@pytest.mark.parametrize("secret", SECRETS)
def test_a_refused_value_that_looks_like_a_secret_is_not_echoed(secret: str) -> None:
    with pytest.raises(ConfigError) as error:
        REGISTRY.parse("compaction.context_threshold", secret, "command line")
    message = str(error.value)
    assert secret not in message and secret[:12] not in message
    assert message.startswith("compaction.context_threshold = value rejected (not shown: ")
    assert "(from command line) is invalid: wrong type; allowed: a number" in message


def test_lcm_config_set_does_not_echo_a_secret(tmp_path: Path) -> None:
    result = run_lcm("config", "set", "compaction.context_threshold", SECRETS[0], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert SECRETS[0][:12] not in result.stderr
    assert "compaction.context_threshold = value rejected (not shown: looks like a secret)" in result.stderr


def test_a_refused_secret_in_a_file_or_the_environment_is_not_echoed(tmp_path: Path, lcm_env: Path) -> None:
    secret = SECRETS[0]
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text(f'[compaction]\nfresh_tail_count = "{secret}"\n')
    with pytest.raises(ConfigError) as in_file:
        load_config(project=tmp_path, plugins=build_plugins())
    with pytest.raises(ConfigError) as in_env:
        load_config(project=tmp_path, env={"LCM_HOME": str(tmp_path / "h"), "LCM_DAEMON_PORT": secret},
                    plugins=build_plugins())
    for error in (in_file, in_env):
        assert secret not in str(error.value) and "(not shown: looks like a secret)" in str(error.value)


def test_a_secret_key_never_echoes_its_refused_value(tmp_path: Path) -> None:
    registry = SettingsRegistry({"vault.token_ttl": Setting("vault.token_ttl", int, 60, "TTL.", secret=True)})
    with pytest.raises(ConfigError) as error:
        registry.parse("vault.token_ttl", "12h", "command line")
    assert "'12h'" not in str(error.value)
    assert "vault.token_ttl = value rejected (not shown: secret key) (from command line)" in str(error.value)


def test_secret_shaped_keys_are_not_echoed(tmp_path: Path, lcm_env: Path) -> None:
    secret = SECRETS[0]
    lcm_env.mkdir(parents=True)
    for document in (f"{secret} = 1\n", f"[compaction]\n{secret} = 1\n"):
        (lcm_env / "config.toml").write_text(document)
        with pytest.raises(ConfigError, match=r"\(not shown: looks like a secret\)") as error:
            load_config(project=tmp_path, plugins=build_plugins())
        assert secret not in str(error.value)
    with pytest.raises(ConfigError) as flag:
        load_config(project=tmp_path, env={"LCM_HOME": str(tmp_path / "h")}, overrides={secret: "1"},
                    plugins=build_plugins())
    assert secret not in str(flag.value)


def test_harmless_refused_values_are_shown_escaped(tmp_path: Path) -> None:
    result = run_lcm("config", "set", "compaction.context_threshold", "abc\x1b[2J", cwd=tmp_path)
    assert result.returncode == 2
    assert "compaction.context_threshold = 'abc\\x1b[2J' (from command line) is invalid" in result.stderr
    assert "\x1b" not in result.stderr


@pytest.mark.parametrize(("name", "hint"), [
    ("../../evil", ""),
    ("mysql", "did you mean 'sqlite'? "),
    ("postgres", "did you mean 'postgresql'? "),
])
def test_config_set_storage_backend_takes_only_an_available_backend(tmp_path: Path, lcm_env: Path, name: str,
                                                                    hint: str) -> None:
    result = run_lcm("config", "set", "storage.backend", name, cwd=tmp_path)
    assert result.returncode == 2
    assert (f"storage.backend = {name!r} (from command line) is not an available storage backend; {hint}"
            "available: postgresql, sqlite") in result.stderr
    assert not (lcm_env / "config.toml").exists()
    assert run_lcm("config", "set", "storage.backend", "sqlite", cwd=tmp_path).returncode == 0
    assert tomllib.loads((lcm_env / "config.toml").read_text()) == {"storage": {"backend": "sqlite"}}


def test_a_bad_backend_in_a_file_is_named_and_config_set_repairs_it(tmp_path: Path, lcm_env: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    lcm_env.mkdir(parents=True)
    config_file = lcm_env / "config.toml"
    config_file.write_text('[storage]\nbackend = "../../evil"\n')
    broken = run_lcm("search", "anything", cwd=root)
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
    assert (f"storage.backend = '../../evil' (from global:{config_file}) is not an available storage backend; "
            "available: postgresql, sqlite (set one: lcm config set storage.backend NAME") in broken.stderr
    assert not (tmp_path / "evil").exists() and not (lcm_env.parent / "evil").exists()
    assert run_lcm("config", "get", "storage.backend", cwd=root).stdout.strip() == "../../evil"
    assert run_lcm("config", "set", "storage.backend", "sqlite", cwd=root).returncode == 0
    repaired = run_lcm("search", "anything", cwd=root)
    assert repaired.returncode in (0, 1) and "storage.backend" not in repaired.stderr, repaired.stderr


def test_lcm_config_repairs_a_file_every_other_command_refuses(tmp_path: Path, lcm_env: Path) -> None:
    lcm_env.mkdir(parents=True, exist_ok=True)
    (lcm_env / "config.toml").write_text("[compaction]\ncontext_threshold = nan\n[bogus]\nkey = 1\n")
    refused = run_lcm("stats", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    listed = run_lcm("config", "get", "compaction.context_threshold", cwd=tmp_path)
    assert listed.returncode == 0 and "not a finite number" in listed.stderr and "left at its default" in listed.stderr
    assert run_lcm("config", "set", "compaction.context_threshold", "0.7", cwd=tmp_path).returncode == 0
    removed = run_lcm("config", "unset", "bogus.key", cwd=tmp_path)  # an unknown key the file names
    assert removed.returncode == 0, removed.stderr
    assert run_lcm("config", "unset", "bogus.other", cwd=tmp_path).returncode == 2  # named nowhere: refused
    repaired = run_lcm("stats", cwd=tmp_path)
    assert repaired.returncode == 0 and repaired.stderr == "", repaired.stderr
    assert tomllib.loads((lcm_env / "config.toml").read_text()) == {"compaction": {"context_threshold": 0.7}}

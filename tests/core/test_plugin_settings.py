"""Plugin-owned configuration keys: declared by the plugin, refused when unknown, owner shown."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.config import Setting, load_config
from lcm_framework.errors import ConfigError, PluginError
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import Plugins, build_plugins
from tests.conftest import REPO, run_lcm

PLUGIN_KEYS = {
    "sqlite_storage": {"storage.busy_timeout_ms", "storage.fts_tier"},
    "postgres_storage": {"postgresql.url", "postgresql.ca_file", "postgresql.allow_plaintext_loopback",
                         "postgresql.pool_size", "postgresql.acquire_timeout_s", "postgresql.idle_timeout_s",
                         "postgresql.statement_timeout_ms", "postgresql.idle_in_transaction_timeout_ms",
                         "postgresql.schema"},
    "summarizers": {"summarizer.model", "summarizer.api_base", "summarizer.timeout_s", "summarizer.max_retries",
                    "summarizer.concurrency"},
    "gitleaks": {"security.sensitive_patterns", "security.gitleaks_config"},
}


def with_plugin(plugin: object, *, load: str = "") -> Plugins:
    return build_plugins(env={"LCM_LOAD_PLUGINS": load}, extra=[("under_test", plugin)])


def test_built_in_plugins_own_their_keys() -> None:
    owners = _collected()
    for plugin, keys in PLUGIN_KEYS.items():
        assert {k for k, o in owners.items() if o == plugin} == keys, plugin


def _collected() -> dict[str, str]:
    plugins = build_plugins()
    plugins.settings()
    return plugins.provenance("setting")


def test_no_core_module_names_a_plugin_setting() -> None:
    """Neither a plugin's key nor one of its environment variables appears in any core module."""
    plugins = build_plugins()
    declared = plugins.settings()
    assert set(declared) >= set().union(*PLUGIN_KEYS.values())
    names = set(declared) | {env for setting in declared.values() for env in setting.env}
    offenders = []
    for path in sorted((REPO / "lcm_framework").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(REPO)}: {n}" for n in sorted(names)
                      if re.search(rf"\b{re.escape(n)}\b", text)]
    assert not offenders, offenders


def test_unknown_key_names_loaded_plugins_and_closest_key(tmp_path: Path, lcm_env: Path) -> None:
    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text('[postgresql]\nurl = "postgresql://db/lcm"\n')
    config = load_config(project=tmp_path, plugins=build_plugins())  # the PostgreSQL plugin is loaded: its key is known
    assert config.get("postgresql.url") == "postgresql://db/lcm"
    with pytest.raises(ConfigError) as err:
        load_config(project=tmp_path, env={"LCM_HOME": str(lcm_env), "LCM_DISABLE_PLUGINS": "postgres_storage"},
                    plugins=build_plugins({"LCM_DISABLE_PLUGINS": "postgres_storage"}))
    message = str(err.value)
    assert "unknown configuration key 'postgresql.url'" in message
    assert "sqlite_storage" in message and "postgres_storage" not in message
    (lcm_env / "config.toml").write_text("[summarizer]\nmodle = 'x'\n")
    with pytest.raises(ConfigError, match=r"did you mean 'summarizer\.model'"):
        load_config(project=tmp_path, plugins=build_plugins())


@pytest.mark.parametrize(("declared", "fragment"), [
    (Setting("daemon.port", int, 1, "clash"), "'daemon.port' is a core setting"),
    (Setting("chatlog.size", int, "big", "bad default"), "default 'big' is invalid"),
    (Setting("NoSection", str, "", "bad key"), "not of the form section.name"),
    (Setting("chatlog.when", dict, {}, "bad kind"), "is not one of str, int"),
])
def test_invalid_declaration_is_a_plugin_error(tmp_path: Path, declared: Setting, fragment: str) -> None:
    class P:
        @hookimpl
        def lcm_register_settings(self, register: Any) -> None:
            register(declared)

    with pytest.raises(PluginError) as err:
        load_config(project=tmp_path, plugins=with_plugin(P()))
    assert fragment in str(err.value) and "'under_test'" in str(err.value)
    assert "LCM_DISABLE_PLUGINS=under_test" in str(err.value)


def test_two_plugins_declaring_one_key_is_a_plugin_error(tmp_path: Path) -> None:
    class P:
        @hookimpl
        def lcm_register_settings(self, register: Any) -> None:
            register(Setting("postgresql.url", str, None, "mine", nullable=True))

    with pytest.raises(PluginError, match=r"'postgresql\.url' registered by both"):
        load_config(project=tmp_path, plugins=with_plugin(P(), load="postgres_storage"))


def test_a_plugin_whose_settings_hook_fails_is_named(tmp_path: Path, lcm_env: Path) -> None:
    class P:
        @hookimpl
        def lcm_register_settings(self, register: Any) -> None:
            raise RuntimeError("boom")

    lcm_env.mkdir(parents=True)
    (lcm_env / "config.toml").write_text("[chatlog]\nsize = 3\n")
    with pytest.raises(ConfigError, match="plugins whose settings failed to load: under_test"):
        load_config(project=tmp_path, plugins=build_plugins(env={}, extra=[("under_test", P())],
                                                            stderr=io.StringIO()))
    with pytest.raises(PluginError, match="lcm_register_settings failed"):
        load_config(project=tmp_path, plugins=build_plugins(env={"LCM_STRICT_PLUGINS": "1"},
                                                            extra=[("under_test", P())]))


def test_cli_config_list_shows_owners(tmp_path: Path) -> None:
    listing = json.loads(run_lcm("config", "list", "--json", cwd=tmp_path).stdout)
    owners = {row["key"]: row["owner"] for row in listing}
    assert owners["daemon.port"] == "core" and owners["postgresql.url"] == "postgres_storage"
    assert owners["storage.fts_tier"] == "sqlite_storage" and owners["summarizer.model"] == "summarizers"
    assert owners["security.gitleaks_config"] == "gitleaks"
    table = run_lcm("config", "list", cwd=tmp_path).stdout
    assert re.search(r"^postgresql\.pool_size\s+5\s+default\s+postgres_storage$", table, re.M), table
    refused = run_lcm("config", "set", "postgresql.url", "postgresql://db/x", cwd=tmp_path,
                      env={"LCM_DISABLE_PLUGINS": "postgres_storage"})
    assert refused.returncode == 2 and "unknown configuration key 'postgresql.url'" in refused.stderr
    assert "sqlite_storage" in refused.stderr and "Traceback" not in refused.stderr

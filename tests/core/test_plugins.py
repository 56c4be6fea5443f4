"""Plugin discovery through real entry points: safe loading, allow/deny lists, strict mode, listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lcm_framework.errors import PluginError
from lcm_framework.kernel.extensions import CommandSpec, StorageBackendInfo
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import run_lcm

from .fakeplugins import make_distribution

GOOD = '''
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.extensions import CommandSpec

def _configure(parser, plugins):
    parser.add_argument("--loud", action="store_true")

def _run(args, app):
    print("HELLO-FROM-PLUGIN" + ("!" if args.loud else ""))
    return 0

@hookimpl
def lcm_register_commands(register):
    register(CommandSpec(name="hello", help="say hello", configure=_configure, run=_run))
'''
BROKEN_IMPORT = "raise RuntimeError('plugin exploded at import')\n"
BAD_SIGNATURE = '''
from lcm_framework.kernel.hookspecs import hookimpl

@hookimpl
def lcm_register_commands(register, not_a_hook_argument):
    pass
'''
RAISES_IN_HOOK = '''
from lcm_framework.kernel.hookspecs import hookimpl

@hookimpl
def lcm_register_commands(register):
    raise RuntimeError("hook exploded")
'''
UNKNOWN_HOOK = '''
from lcm_framework.kernel.hookspecs import hookimpl

@hookimpl
def lcm_register_teleporters(register):
    pass
'''


@pytest.fixture
def third_party(tmp_path: Path) -> Path:
    return make_distribution(
        tmp_path / "site",
        "lcm-thirdparty",
        {"tp_good": GOOD, "tp_broken": BROKEN_IMPORT, "tp_badsig": BAD_SIGNATURE, "tp_unknown": UNKNOWN_HOOK},
        {"tp_good": "tp_good", "tp_broken": "tp_broken", "tp_badsig": "tp_badsig", "tp_unknown": "tp_unknown"},
    )


def _env(site: Path, **extra: str) -> dict[str, str]:
    return {"PYTHONPATH": str(site), **extra}


def test_third_party_command_is_discovered_and_runs(third_party: Path) -> None:
    result = run_lcm("hello", "--loud", env=_env(third_party))
    assert result.returncode == 0, result.stderr
    assert "HELLO-FROM-PLUGIN!" in result.stdout


def test_broken_plugins_are_reported_with_distribution_and_skipped(third_party: Path) -> None:
    result = run_lcm("plugins", "--all", "--json", env=_env(third_party))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    failed = {f["name"]: f for f in data["failures"]}
    assert set(failed) == {"tp_broken", "tp_badsig", "tp_unknown"}
    assert all(f["distribution"] == "lcm-thirdparty" for f in failed.values())
    assert "plugin exploded at import" in failed["tp_broken"]["error"]
    assert "lcm_register_teleporters" in failed["tp_unknown"]["error"]
    assert "not_a_hook_argument" in failed["tp_badsig"]["error"]
    # stderr names each skipped plugin and its distribution
    assert "skipping plugin 'tp_broken' from lcm-thirdparty" in result.stderr
    good = [p for p in data["plugins"] if p["name"] == "tp_good"]
    assert good and good[0]["registered"] == {"commands": ["hello"]}
    assert good[0]["distribution"] == "lcm-thirdparty" and good[0]["version"] == "1.0"


def test_plugin_raising_inside_its_hook_is_skipped_and_reported(tmp_path: Path) -> None:
    site = make_distribution(
        tmp_path / "site2", "lcm-raiser", {"tp_raiser": RAISES_IN_HOOK}, {"tp_raiser": "tp_raiser"}
    )
    result = run_lcm("config", "get", "daemon.port", env=_env(site))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3737"
    assert "skipping plugin 'tp_raiser' from lcm-raiser" in result.stderr and "hook exploded" in result.stderr
    strict = run_lcm("config", "get", "daemon.port", env=_env(site, LCM_STRICT_PLUGINS="1"))
    assert strict.returncode != 0 and "hook exploded" in strict.stderr and "Traceback" not in strict.stderr


def test_strict_mode_makes_a_broken_plugin_fatal(third_party: Path) -> None:
    result = run_lcm("plugins", env=_env(third_party, LCM_STRICT_PLUGINS="1"))
    assert result.returncode != 0
    assert "failed" in result.stderr and "Traceback" not in result.stderr


def test_disable_list_skips_plugins(third_party: Path) -> None:
    env = _env(third_party, LCM_DISABLE_PLUGINS="tp_broken,tp_badsig,tp_unknown,tp_good")
    result = run_lcm("plugins", "--all", "--json", env=env)
    data = json.loads(result.stdout)
    names = {p["name"] for p in data["plugins"]}
    assert not names & {"tp_good", "tp_broken"}
    assert data["failures"] == [] and result.stderr == ""


def test_allow_list_loads_only_named_plugins(third_party: Path) -> None:
    result = run_lcm("plugins", "--all", "--json", env=_env(third_party, LCM_LOAD_PLUGINS="tp_good"))
    data = json.loads(result.stdout)
    names = {p["name"] for p in data["plugins"]}
    assert "tp_good" in names
    assert "tp_broken" not in names and "claude_code" not in names
    assert "core_commands" in names  # the core commands are essential


def test_plugins_listing_hides_builtins_without_all() -> None:
    result = run_lcm("plugins", "--json")
    assert result.returncode == 0, result.stderr
    assert all(not p["builtin"] for p in json.loads(result.stdout))


def test_builtin_plugins_come_from_entry_points() -> None:
    plugins = build_plugins(env={})
    assert plugins.infos["core_commands"].distribution == "lcm-framework"
    assert {"plugins", "config"} <= set(plugins.commands())


class _Dup:
    @hookimpl
    def lcm_register_commands(self, register):  # type: ignore[no-untyped-def]
        register(CommandSpec(name="config", help="x", configure=lambda p, plugins: None, run=lambda a, b: 0))


def test_duplicate_registration_names_both_plugins() -> None:
    plugins = build_plugins(env={"LCM_LOAD_PLUGINS": ""}, extra=[("dup", _Dup())])
    with pytest.raises(PluginError, match=r"'core_commands' and 'dup'|'dup' and 'core_commands'"):
        plugins.commands()


class _Backend:
    @hookimpl
    def lcm_register_storage_backends(self, register):  # type: ignore[no-untyped-def]
        register(StorageBackendInfo(name="memory-test", description="test backend", factory=lambda config: None))


def test_storage_backend_descriptions_are_collected_with_provenance() -> None:
    plugins = build_plugins(env={"LCM_LOAD_PLUGINS": ""}, extra=[("membackend", _Backend())])
    assert plugins.storage_backends()["memory-test"].description == "test backend"
    assert plugins.provenance("storage_backend")["memory-test"] == "membackend"


def test_plugin_managers_are_independent() -> None:
    a = build_plugins(env={"LCM_LOAD_PLUGINS": ""}, extra=[("membackend", _Backend())])
    b = build_plugins(env={"LCM_LOAD_PLUGINS": ""})
    assert "memory-test" in a.storage_backends()
    assert "memory-test" not in b.storage_backends()


def test_startup_imports_no_heavy_library() -> None:
    """Loading every plugin and building the CLI parser must not import litellm, psycopg or mcp."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from lcm_framework.kernel.plugins import build_plugins\n"
        "from lcm_framework.cli.main import build_parser\n"
        "p = build_plugins()\n"
        "build_parser(p.commands(), p); p.formats(); p.summarizers(); p.prompt_sources(); p.capabilities()\n"
        "p.storage_backends()\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'litellm', 'psycopg', 'psycopg_pool', 'mcp',"
        " 'starlette', 'uvicorn', 'jinja2', 'httpx'})\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy modules imported at start-up: {out.stdout.strip()}"


def test_disabled_storage_plugin_is_not_opened(tmp_path: Path) -> None:
    result = run_lcm("stats", "--current", cwd=tmp_path, env={"LCM_DISABLE_PLUGINS": "sqlite_storage"})
    assert result.returncode == 2
    assert "storage.backend = 'sqlite' (from default) is not an available storage backend; available: postgresql" \
        in result.stderr
    assert not (tmp_path / "home" / ".lcm" / "projects").exists()

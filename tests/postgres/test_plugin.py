"""Plugin registration: the backend and commands are registered, and loading them stays cheap."""

from __future__ import annotations

import subprocess
import sys

from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import run_lcm


def test_backend_and_commands_are_registered() -> None:
    plugins = build_plugins()
    assert "postgresql" in plugins.storage_backends()
    plugins.settings()
    assert plugins.provenance("setting")["postgresql.url"] == "postgres_storage"
    assert {"postgres", "machine", "project"} <= set(plugins.commands())
    assert plugins.provenance("command")["postgres"] == "postgres_storage"


def test_registering_imports_no_driver() -> None:
    code = ("import sys; from lcm_framework.kernel.plugins import build_plugins; p = build_plugins(); "
            "p.commands(); p.storage_backends(); print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_help_of_each_command() -> None:
    for args in (("postgres", "--help"), ("postgres", "grants", "--help"), ("machine", "--help"),
                 ("project", "link", "--help")):
        done = run_lcm(*args)
        assert done.returncode == 0 and "usage: lcm" in done.stdout, done.stderr
    done = run_lcm("postgres", "grants", "--role", "Bad-Role")
    assert done.returncode != 0 and "Traceback" not in done.stderr and "--role" in done.stderr

"""One test per hook: an in-process plugin implements it and the core registry sees the result.

``test_every_hook_has_a_test_and_a_doc_entry`` fails when a hook is added without both.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.agents.contracts import AgentStatus, HookEvent
from lcm_framework.agents.registry import registered
from lcm_framework.installer import jsonfile
from lcm_framework.installer.agent_files import (
    add_mcp_server,
    edit_json,
    has_mcp_server,
    hook_entries,
    installed_events,
    load_json,
    mcp_spec,
)
from lcm_framework.kernel import hookspecs
from lcm_framework.kernel.extensions import Capability, CommandSpec, Rule, RulePack, StorageBackendInfo
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import Plugins, build_plugins
from lcm_framework.storage.models import FormatIdentity, NewMessage, Role
from lcm_framework.transcripts.contracts import MappedRecord

REPO = Path(__file__).resolve().parents[2]


def only(plugin: object) -> Plugins:
    """A manager with no entry-point plugins but ``plugin`` (and the essential core commands)."""
    return build_plugins(env={"LCM_LOAD_PLUGINS": ""}, extra=[("under_test", plugin)])


class ChatLogFormat:
    identity = FormatIdentity("chatlog", "chatlog-jsonl", "v1")
    provider = "chatlog"

    def default_roots(self, env: Any) -> list[Path]:
        return []

    def discover(self, root: Path) -> Any:
        return iter(sorted(root.rglob("*.jsonl")))

    def sniff(self, head: Any) -> bool:
        return bool(head) and all(isinstance(r, dict) and "speaker" in r for r in head)

    def map_record(self, record: Any) -> MappedRecord:
        role = Role.USER if record.get("speaker") == "human" else Role.ASSISTANT
        text = str(record.get("text", ""))
        return MappedRecord(session_id=record.get("chat"),
                            message=NewMessage(role=role, content=text, token_count=len(text) // 4))

    def structural_samples(self) -> list[Any]:
        return [{"speaker": "human", "text": "", "chat": ""}]


def test_hook_lcm_register_formats() -> None:
    class P:
        @hookimpl
        def lcm_register_formats(self, register: Any) -> None:
            register(ChatLogFormat())

    plugins = only(P())
    fmt = plugins.formats()["chatlog/chatlog-jsonl/v1"]
    mapped = fmt.map_record({"speaker": "human", "text": "hello there", "chat": "c1"})
    assert mapped.session_id == "c1" and mapped.message is not None and mapped.message.role is Role.USER
    assert plugins.provenance("format") == {"chatlog/chatlog-jsonl/v1": "under_test"}
    # detection goes through each registered format's sniff
    assert plugins.sniff_format([{"speaker": "human"}]) == "chatlog/chatlog-jsonl/v1"
    assert plugins.sniff_format([{"type": "user"}]) is None


def test_hook_lcm_register_rule_packs() -> None:
    seen: dict[str, Any] = {}

    class P:
        @hookimpl
        def lcm_register_rule_packs(self, register: Any, config: Any) -> None:
            seen["config"] = config
            register(RulePack(name="acme", rules=(Rule(id="acme-token", regex=r"acme_[0-9a-f]{32}"),)))

    plugins = only(P())
    packs = plugins.rule_packs(config="the-config")  # type: ignore[arg-type]
    assert packs["acme"].rules[0].id == "acme-token"
    assert seen["config"] == "the-config"


def test_hook_lcm_register_summarizers() -> None:
    class Shouty:
        name = "shouty"

        def summarize(self, request: Any) -> str:
            return str(request.segment).upper()

        def count_tokens(self, text: str) -> int:
            return len(text) // 4

    class P:
        @hookimpl
        def lcm_register_summarizers(self, register: Any) -> None:
            register("shouty", lambda config: Shouty())

    factory = only(P()).summarizers()["shouty"]
    assert factory(None).count_tokens("abcdefgh") == 2  # type: ignore[arg-type]


def test_hook_lcm_register_embedders() -> None:
    class Letters:
        name, dimensions, local = "letters", 2, True

        def embed(self, texts: Any) -> list[list[float]]:
            return [[float(len(t)), 0.0] for t in texts]

    class P:
        @hookimpl
        def lcm_register_embedders(self, register: Any) -> None:
            register("letters", lambda config: Letters())

    embedder = only(P()).embedders()["letters"](None)  # type: ignore[arg-type]
    assert embedder.embed(["abc"]) == [[3.0, 0.0]] and embedder.dimensions == 2


def test_hook_lcm_register_prompt_sources() -> None:
    class Src:
        def __init__(self, name: str, priority: int) -> None:
            self.name, self.priority = name, priority

        def get_source(self, template: str) -> str | None:
            return f"{self.name}:{{{{ segment }}}}" if template == "leaf" else None

        def list_templates(self) -> list[str]:
            return ["leaf"]

    class P:
        @hookimpl
        def lcm_register_prompt_sources(self, register: Any) -> None:
            register(Src("low", 0))
            register(Src("high", 10))

    sources = only(P()).prompt_sources()
    assert [s.name for s in sources] == ["high", "low"]


def test_hook_lcm_register_storage_backends(tmp_path: Path) -> None:
    from lcm_framework.config import load_config
    from lcm_framework.errors import ConfigError
    from lcm_framework.storage.selection import open_backend

    built: list[Any] = []

    class DuckDb:
        name, capabilities = "duckdb", None

    def factory(config: Any) -> Any:
        built.append(config)
        return DuckDb()

    class P:
        @hookimpl
        def lcm_register_storage_backends(self, register: Any) -> None:
            register(StorageBackendInfo(name="duckdb", description="DuckDB file per project", factory=factory))

    plugins = only(P())
    assert plugins.storage_backends()["duckdb"].description == "DuckDB file per project"
    config = load_config(project=tmp_path, plugins=plugins, overrides={"storage.backend": "duckdb"})
    backend = open_backend(config, plugins=plugins)
    assert isinstance(backend.driver, DuckDb) and backend.name == "duckdb" and built == [config]
    with pytest.raises(ConfigError, match=r"storage.backend = 'sqlite' is not an available storage backend; "
                                          r"available: duckdb \("):
        open_backend(config, "sqlite", plugins=plugins)


def test_hook_lcm_register_capabilities() -> None:
    from lcm_framework.kernel.arguments import ArgumentError, call
    from lcm_framework.kernel.extensions import Argument

    class P:
        @hookimpl
        def lcm_register_capabilities(self, register: Any) -> None:
            register(Capability(name="lcm_echo", description="Echo.",
                                arguments=(Argument("x", int, "A number.", default=3, maximum=9),),
                                handler=lambda app, args: dict(args)))

    cap = only(P()).capabilities()["lcm_echo"]
    assert call(None, cap, {"x": 1}) == {"x": 1} and call(None, cap, {}) == {"x": 3}  # type: ignore[arg-type]
    assert cap.parameters["properties"]["x"] == {"type": "integer", "description": "A number.", "maximum": 9,
                                                 "default": 3}
    with pytest.raises(ArgumentError, match="x must be at most 9"):
        call(None, cap, {"x": 10})  # type: ignore[arg-type]


def test_hook_lcm_register_commands() -> None:
    class P:
        @hookimpl
        def lcm_register_commands(self, register: Any) -> None:
            register(CommandSpec(name="hello", help="say hello",
                                 configure=lambda p, plugins: p.add_argument("--loud", action="store_true"),
                                 run=lambda args, app: 7 if args.loud else 0))

    from lcm_framework.cli.main import build_parser

    plugins = only(P())
    args = build_parser(plugins.commands(), plugins).parse_args(["hello", "--loud"])
    assert isinstance(args, argparse.Namespace) and args._spec.run(args, None) == 7


class DotAgent:
    """A minimal agent integration: hooks and MCP server in ``$HOME/.dotagent/settings.json``."""

    name = "dotagent"
    display_name = "Dot Agent"
    events = (HookEvent("SessionStart", 7, native="Begin"), HookEvent("Stop", 3))
    transcript_formats = ("chatlog/chatlog-jsonl/v1",)

    def config_dir(self, env: Any) -> Path:
        return Path(env["HOME"]) / ".dotagent"

    def present(self, env: Any) -> bool:
        return True

    def changes(self, env: Any, *, install: bool) -> list[Any]:
        def edit(data: dict[str, Any]) -> list[str]:
            if install:
                jsonfile.add_hooks(data, hook_entries(self.events, "--agent", self.name))
                return add_mcp_server(data, mcp_spec(), self.config_dir(env) / "settings.json")
            jsonfile.remove_hooks(data)
            jsonfile.remove_mcp_server(data, "lcm")
            return []

        return [edit_json(self.config_dir(env) / "settings.json", edit, install=install)]

    def status(self, env: Any) -> AgentStatus:
        data = load_json(self.config_dir(env) / "settings.json", "settings")
        return AgentStatus(installed_events(self.events, data), has_mcp_server(data))


def test_hook_lcm_register_agents(tmp_path: Path) -> None:
    class P:
        @hookimpl
        def lcm_register_agents(self, register: Any) -> None:
            register(DotAgent())

    from lcm_framework.errors import LcmError, PluginError
    from lcm_framework.installer.agents import changes

    plugins = only(P())
    assert list(registered(plugins)) == ["dotagent"]
    env = {"HOME": str(tmp_path)}
    for change in changes("dotagent", env, install=True, plugins=plugins):
        change.apply()
    data = json.loads((tmp_path / ".dotagent" / "settings.json").read_text())
    (begin,) = data["hooks"]["Begin"][0]["hooks"]
    assert begin["command"].endswith("hook SessionStart --agent dotagent") and begin["timeout"] == 7
    assert data["mcpServers"]["lcm"]["args"][-1] == "mcp"
    status = plugins.agents()["dotagent"].status(env)
    assert (status.hooks, status.mcp) == ({"SessionStart", "Stop"}, True)
    for change in changes("dotagent", env, install=False, plugins=plugins):
        change.apply()
    assert json.loads((tmp_path / ".dotagent" / "settings.json").read_text()) == {}
    with pytest.raises(LcmError, match="unknown agent 'other' \\(choose from: dotagent, all\\)"):
        changes("other", env, install=True, plugins=plugins)

    class Bad:
        @hookimpl
        def lcm_register_agents(self, register: Any) -> None:
            register(type("Spaced", (DotAgent,), {"name": "Dot Agent"})())

    with pytest.raises(PluginError, match="agent 'Dot Agent' registered by 'under_test' is not a valid agent name"):
        registered(only(Bad()))


def test_doctor_reports_an_agent_whose_transcripts_no_plugin_reads(tmp_path: Path, lcm_env: Path) -> None:
    class Agent:
        @hookimpl
        def lcm_register_agents(self, register: Any) -> None:
            register(DotAgent())

    class Format:
        @hookimpl
        def lcm_register_formats(self, register: Any) -> None:
            register(ChatLogFormat())

    from lcm_framework.app import App
    from lcm_framework.config import load_config
    from lcm_framework.diagnostics import check_agents
    from lcm_framework.installer.agents import changes

    env = {"HOME": str(tmp_path)}
    config = load_config(project=tmp_path, plugins=build_plugins())
    alone = build_plugins(env={"LCM_LOAD_PLUGINS": ""}, extra=[("agent", Agent())])
    for change in changes("dotagent", env, install=True, plugins=alone):
        change.apply()
    app = App(config, alone)
    (check,) = check_agents(app, env)
    app.close()
    assert (check.name, check.status) == ("dotagent_hooks", "fail")
    assert "no plugin reads its transcripts (chatlog/chatlog-jsonl/v1)" in check.detail
    both = build_plugins(env={"LCM_LOAD_PLUGINS": ""}, extra=[("agent", Agent()), ("format", Format())])
    app = App(config, both)
    (check,) = check_agents(app, env)
    app.close()
    assert check.status == "ok" and check.data["config_dir"] == str(tmp_path / ".dotagent")


def test_hook_lcm_register_settings(tmp_path: Path) -> None:
    from lcm_framework.config import Setting, load_config

    class P:
        @hookimpl
        def lcm_register_settings(self, register: Any) -> None:
            register(Setting("chatlog.token", str, None, "API token.", secret=True, nullable=True))
            register(Setting("chatlog.page_size", int, 50, "Records per page.", minimum=1, maximum=500))

    plugins = only(P())
    assert set(plugins.settings()) == {"chatlog.token", "chatlog.page_size"}
    assert plugins.provenance("setting") == {"chatlog.token": "under_test", "chatlog.page_size": "under_test"}
    env = {"LCM_HOME": str(tmp_path / "h"), "LCM_CHATLOG_TOKEN": "tok-0123456789", "LCM_CHATLOG_PAGE_SIZE": "80"}
    config = load_config(project=tmp_path, env=env, plugins=plugins)
    assert (config.get("chatlog.page_size"), config.source("chatlog.page_size")) == (80, "env:LCM_CHATLOG_PAGE_SIZE")
    assert config.display("chatlog.token") == "tok-***"
    assert config.settings.owners["chatlog.token"] == "under_test" and config.settings.owners["daemon.port"] == "core"


def test_every_hook_has_a_test_and_a_doc_entry() -> None:
    hooks = sorted(name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("lcm_"))
    assert len(hooks) >= 8
    tests = set(re.findall(r"^def (test_hook_\w+)\(", Path(__file__).read_text(), re.M))
    docs = set(re.findall(r"^### (lcm_\w+)$", (REPO / "docs" / "plugins.md").read_text(), re.M))
    missing_tests = [h for h in hooks if f"test_hook_{h}" not in tests]
    missing_docs = [h for h in hooks if h not in docs]
    assert not missing_tests, f"hooks without a test_hook_<name> test: {missing_tests}"
    assert not missing_docs, f"hooks without a '### <name>' section in docs/plugins.md: {missing_docs}"
    for hook in hooks:
        assert (getattr(hookspecs, hook).__doc__ or "").strip(), f"{hook} has no docstring"

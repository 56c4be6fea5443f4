"""Every door that stores text scrubs it: planted secrets never reach storage, whichever way they come in.

Secrets of five kinds (GitHub ``ghp_`` tokens, AWS ``AKIA`` key ids, JWTs, Slack ``xoxb-`` tokens, a
private-key block), each in its usual context inside random text, go through each door: ``lcm memory add``
(project and ``--global``), MCP ``lcm_store`` (the real server and the capability layer it calls), the
daemon's ``/store``, ``/memory`` and ``/recall``, the UserPromptSubmit hook, prompt recall, a model
summarizer that writes the secret into its summaries and exploration summaries, and large-file
references. Afterwards no form of the secret is anywhere: not in a stored text read back through the
storage contracts (every project, both backends), not in the bytes of any file under ``LCM_HOME``
(SQLite databases and their WAL, large files, the outbox), not in any row of a PostgreSQL schema.
"""

from __future__ import annotations

import asyncio
import json
import os
import string
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lcm_scrub_gitleaks.audit import stored_texts

from lcm_framework.app import App
from lcm_framework.compaction import CompactionEngine
from lcm_framework.config import load_config
from lcm_framework.ingest import import_sources
from lcm_framework.kernel.arguments import call
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.memory import actions, hints
from lcm_framework.memory.scope import memory_scope
from lcm_framework.summarize.contracts import SummaryRequest
from tests.conftest import OFFLINE_ENV, run_lcm
from tests.daemon.support import DaemonProcess, free_port
from tests.ingest.support import claude_records, write_jsonl

from .corpus import CASES, Gen

KINDS = ("github-pat", "aws-access-key-id", "jwt", "slack-token", "private-key")
FILLER = st.text(alphabet=string.ascii_letters + string.digits + " .,;", max_size=24)


@st.composite
def planted(draw: st.DrawFn, kind: str | None = None) -> tuple[str, str]:
    """(random text holding a secret in its usual context, the secret)."""
    context, secret = CASES[kind or draw(st.sampled_from(KINDS))](Gen(draw(st.integers(0, 2**31))))
    return f"{draw(FILLER)} {context} {draw(FILLER)}".strip(), secret


@st.composite
def all_kinds(draw: st.DrawFn) -> tuple[str, list[str]]:
    """One text holding a secret of every kind (for the doors that cost a process each), and the secrets."""
    found = [draw(planted(kind)) for kind in KINDS]
    return "\n".join(text for text, _ in found), [secret for _, secret in found]


def needles(secret: str) -> set[str]:
    """The secret, as JSON would escape it, and each long line of it (a key block is several)."""
    return {secret, json.dumps(secret)[1:-1]} | {line for line in secret.splitlines() if len(line) >= 20}


def assert_stored_nowhere(app: App, secrets: list[str]) -> None:
    wanted = {n for s in secrets for n in needles(s)}
    for ref in app.storage.list_projects():
        storage = app.storage.open_project(ref)
        try:
            for kind, record_id, field, text in stored_texts(storage):
                leaked = [n for n in wanted if text and n in text]
                assert not leaked, f"a planted secret is stored in {kind} {record_id} {field}"
        finally:
            storage.close()
    home = Path(app.config.home)
    for path in (p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert not [n for n in wanted if n.encode() in data], f"a planted secret is in {path}"
    if app.config.get("storage.backend") == "postgresql":
        _assert_no_row_holds(app, wanted)


def _assert_no_row_holds(app: App, wanted: set[str]) -> None:
    import psycopg

    schema = str(app.config.get("postgresql.schema"))
    with psycopg.connect(str(app.config.get("postgresql.url")), autocommit=True) as conn:
        tables = [t for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))]
        for table in tables:
            for (row,) in conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t'):
                assert not [n for n in wanted if n in row], f"a planted secret is in table {table}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Configuration overrides of the storage backend the doors write to."""
    if request.param == "sqlite":
        yield {}
        return
    from tests.postgres.support import require_database

    database = require_database()
    with database.fresh_schema() as schema:
        yield {"storage.backend": "postgresql", "postgresql.url": database.url,
               "postgresql.allow_plaintext_loopback": "true", "postgresql.schema": schema}


def make_app(root: Path, backend: dict[str, str]) -> App:
    return App(load_config(project=root, overrides=backend, plugins=build_plugins()), build_plugins())


@given(texts=st.lists(planted(), min_size=4, max_size=4))
@settings(max_examples=6, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_memory_doors_and_prompt_recall_store_no_planted_secret(tmp_path: Path, backend: dict[str, str],
                                                               texts: list[tuple[str, str]]) -> None:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    app = make_app(root, backend)
    store = app.plugins.capabilities()["lcm_store"]
    try:
        (local, s1), (user, s2), (mcp, s3), (prompt, s4) = texts
        actions.run(app, "add", {"text": local, "tags": [local.splitlines()[0]]})  # lcm memory add, /memory
        actions.run(app, "add", {"text": user, "user_wide": True})  # lcm memory add --global
        call(app, store, {"text": mcp, "tags": [mcp.splitlines()[-1]]})  # MCP lcm_store, daemon /store
        with memory_scope(app) as project, memory_scope(app, user_wide=True) as user_scope:
            shown = hints.for_prompt(project, user_scope, f"{local} {user} {prompt}", session_id=None,
                                     min_score=0.0, max_tokens=10_000)
        assert shown["items"]  # something was surfaced, so a surfacing (and its query, if any) was recorded
        assert_stored_nowhere(app, [s1, s2, s3, s4])
    finally:
        app.close()


class LeakySummarizer:
    """A model that writes the secret it is given into every summary and exploration summary."""

    name = "leaky"

    def __init__(self, leak: str) -> None:
        self.leak = leak

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    def summarize(self, request: SummaryRequest) -> str:
        return f"Summary: the user shared {self.leak} here."


@given(leak=planted())
@settings(max_examples=3, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_summaries_and_large_file_references_a_model_writes_are_scrubbed(
        tmp_path: Path, backend: dict[str, str], leak: tuple[str, str]) -> None:
    text, secret = leak
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    app = make_app(root, {**backend, "compaction.large_file_token_threshold": "200",
                          "compaction.leaf_chunk_tokens": "1000", "compaction.fresh_tail_count": "2"})
    try:
        big = "\n".join(f"line {i}: the build step {i} compiles module_{i}.py" for i in range(120))
        records = claude_records(f"leak-{abs(hash(text))}", str(root), 6, text=f"<file name=\"big.log\">{big}</file>")
        import_sources(app, [write_jsonl(tmp_path / f"src-{abs(hash(text))}.jsonl", records)], project=root)
        with app.project() as storage:
            for conversation in storage.conversations.list_conversations():
                CompactionEngine(app, summarizer=LeakySummarizer(text)).compact(storage, conversation.conversation_id)
            stored = [s for c in storage.conversations.list_conversations()
                      for s in storage.summaries.list_summaries(c.conversation_id)]
            files = [f for c in storage.conversations.list_conversations()
                     for f in storage.large_files.list_files(c.conversation_id)]
        assert_stored_nowhere(app, [secret])
        assert any("[REDACTED:" in s.content for s in stored)  # the model's leak, scrubbed
        assert files and all("[REDACTED:" in f.exploration_summary for f in files)
    finally:
        app.close()


async def _mcp_store(root: Path, text: str) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.types import TextContent

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "lcm_framework.cli.main", "--project", str(root), "mcp"],
                                   env={**os.environ, **OFFLINE_ENV}, cwd=str(root))
    async with Client(params, read_timeout_seconds=60) as client:
        content = (await client.call_tool("lcm_store", {"text": text, "tags": [text[:40]]})).content[0]
        assert isinstance(content, TextContent)
        return dict(json.loads(content.text))


@given(planted_text=all_kinds())
@settings(max_examples=2, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_the_cli_and_the_real_mcp_server_store_no_planted_secret(tmp_path: Path, lcm_env: Path,
                                                                 planted_text: tuple[str, list[str]]) -> None:
    text, secrets = planted_text
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for scope in ((), ("--global",)):
        added = run_lcm("memory", "add", text, "--tag", text.splitlines()[0], *scope, "--json", cwd=root)
        assert added.returncode == 0, added.stderr
        assert "[REDACTED:" in json.loads(added.stdout)["content"]
    stored = asyncio.run(_mcp_store(root, f"remember this: {text}"))
    assert stored["id"].startswith("mem_")
    app = App(load_config(project=root, plugins=build_plugins()), build_plugins())
    try:
        assert_stored_nowhere(app, secrets)
    finally:
        app.close()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(tmp_path_factory.mktemp("door-daemon") / "home", free_port()).start()
    try:
        yield proc
    finally:
        proc.stop()


@given(planted_text=all_kinds())
@settings(max_examples=2, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_the_daemon_routes_and_the_prompt_hook_store_no_planted_secret(
        daemon: DaemonProcess, tmp_path: Path, planted_text: tuple[str, list[str]]) -> None:
    text, secrets = planted_text
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    headers = {"Authorization": f"Bearer {daemon.token}"}

    def post(path: str, body: dict[str, Any]) -> Any:
        answer = httpx.post(f"{daemon.url}{path}", json={"project": str(root), **body}, headers=headers, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.json()

    assert "[REDACTED:" in post("/store", {"text": text, "tags": [text.splitlines()[0]]})["result"]["tags"][0]
    post("/memory", {"action": "add", "text": f"Also: {text}"})
    post("/memory", {"action": "add", "text": f"Everywhere: {text}", "user_wide": True})
    assert post("/recall", {"prompt": f"why {text}"})["items"]
    env = {"LCM_HOME": str(daemon.home), "LCM_DAEMON_PORT": str(daemon.port), "LCM_DAEMON_AUTOSTART": "false"}
    hook = run_lcm("hook", "UserPromptSubmit", cwd=root, env=env, input=json.dumps(
        {"cwd": str(root), "session_id": "door-session", "hook_event_name": "UserPromptSubmit",
         "prompt": f"and now {text}"}))
    assert hook.returncode == 0 and "mem_" in hook.stdout, hook.stderr
    app = App(load_config(project=root, env={**os.environ, "LCM_HOME": str(daemon.home)},
                          plugins=build_plugins()), build_plugins())
    try:
        assert_stored_nowhere(app, secrets)
    finally:
        app.close()

"""The restricted runtime role: the printed grant script is sufficient, and exactly so."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lcm_postgres import grants

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.models import (
    Checkpoint,
    FormatIdentity,
    LargeFile,
    NativeRecordInput,
    NewMemory,
    NewMessage,
    NewPart,
    NewSummary,
    PartKind,
    ProjectRef,
    Role,
    SearchMode,
    SearchQuery,
    SessionIngestRecord,
    SummaryKind,
)
from tests.conftest import run_lcm

from .support import TestDatabase

pytestmark = pytest.mark.postgres


@pytest.fixture
def runtime_role(db: TestDatabase, schema: str, make_factory: Callable[..., Any]) -> Iterator[tuple[str, str]]:
    """(role, url): a LOGIN role with no privileges yet, and the schema migrated by the owner."""
    make_factory().close()
    role = f"lcm_rt_{uuid.uuid4().hex[:10]}"
    with db.connect() as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
    url = db.url.replace("://postgres@", f"://{role}@", 1)
    assert role in url
    try:
        yield role, url
    finally:
        with db.connect() as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE "{role}"')


def apply_grants(db: TestDatabase, schema: str, role: str, tmp_path: Path, *, via_cli: bool = False) -> None:
    """Apply the reviewed script as the schema owner (printed by the real CLI when ``via_cli``)."""
    script = grants.render(role, schema)
    if via_cli:
        printed = run_lcm("-c", f"postgresql.schema={schema}", "postgres", "grants", "--role", role, cwd=tmp_path)
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout == script
    assert "TRUNCATE" not in script.replace("no DDL, TRUNCATE", "") and "GRANT OPTION" not in script
    with db.connect() as conn:
        conn.execute(script)


def exercise(project: Any) -> None:
    """Touch every repository write path the runtime role must be able to use."""
    conv = project.conversations.get_or_create_conversation("sess")
    first, second = project.conversations.append_messages(conv.conversation_id, [
        NewMessage(Role.USER, "grant check alpha", 3, parts=[NewPart(PartKind.TEXT, text="alpha")]),
        NewMessage(Role.ASSISTANT, "grant check beta", 3, parts=[NewPart(PartKind.TEXT, text="beta")])])
    project.conversations.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "replayed", 1, seq=5)])
    project.context.append_messages(conv.conversation_id, [first.message_id, second.message_id])
    project.summaries.create_summary(NewSummary("sum_1", conv.conversation_id, SummaryKind.LEAF, 0, "summary", 1,
                                                None, None, 1, source_message_ids=[first.message_id]))
    project.context.replace_range(conv.conversation_id, 0, 0, "sum_1")
    project.large_files.create_file(LargeFile("file_1", conv.conversation_id, None, "a.txt", "text/plain", 10, 2,
                                              "0" * 64, "explored", datetime.now(UTC)))
    memory = project.promoted_memory.create_memory(NewMemory("remember grants", tags=["t"]))
    project.promoted_memory.set_confidence(memory.memory_id, 0.9)
    project.recall.record_surfacing(["sum_1"], query="q")
    project.recall.record_feedback("sum_1", useful=True)
    project.redaction_admin.add_counts({"aws": 2})
    project.coordination.record_session_ingest(SessionIngestRecord("sess", "claude", datetime.now(UTC), 2))
    lease = project.coordination.acquire_lease("compact:1", "me", 30)
    assert lease is not None
    project.coordination.check_fence(project.coordination.renew_lease(lease, 30))
    project.coordination.release_lease(lease)
    fmt = FormatIdentity("claude-code", "claude-jsonl", "v1")
    cp = Checkpoint("src", 0, 10, "0" * 64, "s1", 0, 1, 0, 0)
    result = project.native_transcripts.ingest_batch(
        [NativeRecordInput("k1", fmt, "sess", "a.jsonl", 0, "{}", "0" * 64, "s1", datetime.now(UTC),
                           second.message_id)], source_key="src", expected=None, new_checkpoint=cp)
    assert result.inserted == 1
    # deletion cascades to parts and unlinks native records through the owner's referential actions
    assert project.conversations.delete_messages([first.message_id, second.message_id]).deleted == (
        second.message_id,)
    assert project.conversations.list_parts([second.message_id]) == {}
    assert project.native_transcripts.list_by_source("a.jsonl")[0].message_id is None
    assert project.lexical_search.search(SearchQuery("grant"))
    assert project.lexical_search.search(SearchQuery("check", mode=SearchMode.SUBSTRING))
    project.transaction(lambda repos: repos.conversations.message_count(conv.conversation_id))
    project.redaction_admin.purge()
    assert project.stats().conversations == 1


def test_printed_grants_are_enough_for_every_repository(db: TestDatabase, schema: str, tmp_path: Path,
                                                        runtime_role: tuple[str, str],
                                                        make_factory: Callable[..., Any]) -> None:
    role, url = runtime_role
    apply_grants(db, schema, role, tmp_path, via_cli=True)
    factory = make_factory(url)
    assert factory.role == "runtime"
    project = factory.open_project(ProjectRef("p" * 64, "/srv/p"))
    exercise(project)
    project.close()
    verified = run_lcm("-c", f"postgresql.schema={schema}", "postgres", "verify", "--json", cwd=tmp_path,
                       env={"LCM_POSTGRES_URL": url, "LCM_POSTGRES_ALLOW_PLAINTEXT": "true"})
    assert verified.returncode == 0, verified.stderr
    assert '"role": "runtime"' in verified.stdout


@pytest.mark.parametrize(("tamper", "code"), [
    ("REVOKE DELETE ON {s}.messages FROM {r}", "grant_missing"),
    ("REVOKE USAGE ON SCHEMA {s} FROM {r}", "grant_missing"),
    ("GRANT TRUNCATE ON {s}.messages TO {r}", "grant_excess"),
    ("GRANT UPDATE ON {s}.native_transcripts TO {r}", "grant_excess"),
    ("GRANT SELECT ON {s}.leases TO {r} WITH GRANT OPTION", "grant_excess"),
    ("GRANT CREATE ON SCHEMA {s} TO {r}", "grant_excess"),
    ("GRANT SELECT ON {s}.messages TO PUBLIC", "public_grant"),
])
def test_missing_or_excess_privileges_refuse_start_up(db: TestDatabase, schema: str, tmp_path: Path,
                                                      runtime_role: tuple[str, str],
                                                      make_factory: Callable[..., Any], tamper: str,
                                                      code: str) -> None:
    role, url = runtime_role
    apply_grants(db, schema, role, tmp_path)
    with db.connect() as conn:
        conn.execute(tamper.format(s=f'"{schema}"', r=f'"{role}"'))
    with pytest.raises(StorageUnavailableError) as info:
        make_factory(url)
    assert info.value.code == code
    assert role not in str(info.value) or code != "public_grant"


def test_a_runtime_role_cannot_migrate(db: TestDatabase, schema: str, tmp_path: Path,
                                       runtime_role: tuple[str, str], make_factory: Callable[..., Any]) -> None:
    role, url = runtime_role
    apply_grants(db, schema, role, tmp_path)
    with db.connect() as conn:
        conn.execute(f'DELETE FROM "{schema}".schema_migrations')
    with pytest.raises(StorageUnavailableError) as info:
        make_factory(url)
    assert info.value.code == "migrations_pending"

"""The daemon's ASGI app in-process (real storage): per-conversation serialization, cross-project concurrency."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import httpx
import pytest

from lcm_framework.config import load_config
from lcm_framework.daemon.server import build_app
from lcm_framework.daemon.service import DaemonService
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID

SESSION = CLAUDE_SAMPLE_ID
TOKEN = "t" * 43


def make_project(root: Path) -> tuple[Path, Path]:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    transcript = root / f"{SESSION}.jsonl"
    shutil.copyfile(CLAUDE_SAMPLE, transcript)
    return root, transcript


@pytest.fixture
def service(lcm_env: Path, tmp_path: Path) -> DaemonService:
    return DaemonService(load_config(project=tmp_path, plugins=build_plugins()), build_plugins())


async def _client(service: DaemonService) -> httpx.AsyncClient:
    app = build_app(service, TOKEN, consume_outbox=False)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1",
                             headers={"Authorization": f"Bearer {TOKEN}"})


def test_one_conversation_is_serialized_while_other_projects_proceed(service: DaemonService,
                                                                     tmp_path: Path) -> None:
    project_a, transcript_a = make_project(tmp_path / "a")
    project_b, transcript_b = make_project(tmp_path / "b")

    async def scenario() -> None:
        async with await _client(service) as client:
            lock = service.lock(project_a, SESSION)
            await lock.acquire()
            ingest_a = asyncio.create_task(client.post("/ingest", json={
                "project": str(project_a), "path": str(transcript_a), "session_id": SESSION, "compact": "none"}))
            await asyncio.sleep(0.3)
            assert not ingest_a.done()  # waits for the conversation's lock
            other = await asyncio.wait_for(client.post("/ingest", json={
                "project": str(project_b), "path": str(transcript_b), "session_id": SESSION, "compact": "none"}),
                timeout=30)
            assert other.status_code == 200, other.text  # another project is not blocked
            assert not ingest_a.done()
            lock.release()
            answer = await asyncio.wait_for(ingest_a, timeout=30)
            assert answer.status_code == 200, answer.text
            assert answer.json()["ingest"]["messages"] > 0
            # same conversation twice at once: serialized, and the second imports nothing new
            first, second = await asyncio.gather(*[client.post("/ingest", json={
                "project": str(project_a), "path": str(transcript_a), "session_id": SESSION,
                "compact": "none"}) for _ in range(2)])
            assert first.status_code == second.status_code == 200
            assert first.json()["ingest"]["messages"] == second.json()["ingest"]["messages"] == 0
        await service.close()

    asyncio.run(scenario())


def test_hook_route_ingests_and_restores(service: DaemonService, tmp_path: Path) -> None:
    project, transcript = make_project(tmp_path / "p")
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project)}

    async def scenario() -> None:
        async with await _client(service) as client:
            stop = await client.post("/hook", json={"event": "Stop", "payload": payload, "wait": True})
            assert stop.status_code == 200, stop.text
            assert stop.json()["ingest"]["messages"] > 0
            start = await client.post("/hook", json={"event": "SessionStart", "payload": payload})
            assert start.status_code == 200, start.text
            assert "restore" in start.json()
            missing = await client.post("/hook", json={"event": "Stop", "payload": {
                **payload, "transcript_path": str(project / "gone.jsonl")}})
            assert missing.status_code == 202 and missing.json()["queued"]  # it may be written after the hook
            not_yet = await client.post("/hook", json={"event": "Stop", "wait": True, "payload": {
                **payload, "transcript_path": str(project / "gone.jsonl")}})
            assert not_yet.status_code == 422
            relative = await client.post("/hook", json={"event": "Stop", "payload": {"cwd": "relative"}})
            assert relative.status_code == 400
        await service.close()

    asyncio.run(scenario())


def test_hook_events_are_queued_durably_then_drained(service: DaemonService, tmp_path: Path, lcm_env: Path) -> None:
    from lcm_framework.outbox import read_backlog

    project, transcript = make_project(tmp_path / "q")
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project)}

    async def scenario() -> None:
        async with await _client(service) as client:
            queued = await client.post("/hook", json={"event": "Stop", "payload": payload})
            assert queued.status_code == 202, queued.text
            assert queued.json()["queued"] == 1
            assert read_backlog(lcm_env).pending == 1  # type: ignore[union-attr]
            assert await service.drain_outbox() == 1
            assert read_backlog(lcm_env).pending == 0  # type: ignore[union-attr]
            ctx = await client.post("/context", json={"project": str(project), "session_id": SESSION})
            assert len(ctx.json()["messages"]) > 0
            found = await client.post("/grep", json={"project": str(project), "pattern": "Address already in use"})
            assert found.status_code == 200, found.text
            assert found.json()["result"]["groups"], found.text
            unknown = await client.post("/grep", json={"project": str(project), "pattern": "Address already in use",
                                                       "session": "no-such-session"})
            assert unknown.status_code == 404 and unknown.json()["error"] == "session_not_found", unknown.text
            missing = await client.post("/describe", json={"project": str(project), "id": "sum_0123456789abcdef"})
            assert missing.status_code == 404 and missing.json()["error"] == "not_found", missing.text
            bad = await client.post("/grep", json={"project": str(project)})
            assert bad.status_code == 400 and "pattern" in bad.json()["message"]
            stats = await client.post("/stats", json={"project": str(project)})
            (row,) = stats.json()["projects"]
            assert row["messages"] > 0 and row["conversations"] == 1
        await service.close()

    asyncio.run(scenario())


def test_a_hook_event_stored_before_its_transcript_exists_is_not_an_error(service: DaemonService, tmp_path: Path,
                                                                          lcm_env: Path) -> None:
    """The first prompt of a new session while the daemon starts: ``lcm hook`` keeps UserPromptSubmit in the
    outbox before the agent has written the transcript; the transcript appears later and the Stop ingests it.
    A transcript that stays missing is still recorded as the event's error."""
    from lcm_framework.outbox import Outbox, outbox_path

    project = tmp_path / "race"
    (project / ".git").mkdir(parents=True)
    transcript = project / f"{SESSION}.jsonl"
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project)}

    def capture(event: str, body: dict[str, str]) -> None:  # what ``lcm hook`` does when no daemon answers
        with Outbox(outbox_path(lcm_env)) as box:
            box.capture(event, body)

    async def scenario() -> None:
        async with await _client(service) as client:
            capture("UserPromptSubmit", payload)
            assert await service.drain_outbox() == 1
            shutil.copyfile(CLAUDE_SAMPLE, transcript)
            capture("Stop", payload)
            assert await service.drain_outbox() == 1
            ctx = await client.post("/context", json={"project": str(project), "session_id": SESSION})
            assert len(ctx.json()["messages"]) > 0, ctx.text
            capture("Stop", {**payload, "transcript_path": str(project / "never-written.jsonl")})
            assert await service.drain_outbox() == 0
            early = await client.post("/hook", json={"event": "UserPromptSubmit", "payload": {
                **payload, "transcript_path": str(project / "not-yet.jsonl")}})
            assert early.status_code == 202 and early.json()["queued"] is None, early.text
        await service.close()

    asyncio.run(scenario())
    with Outbox(outbox_path(lcm_env)) as box:
        rows = [(e.event, e.processed_at is not None, e.last_error) for e in box.events()]
    # the Stop naming a transcript not written yet waits for it (retried, daemon.transcript_wait_s)
    assert rows == [("UserPromptSubmit", True, None), ("Stop", True, None),
                    ("Stop", False, "TranscriptNotWrittenYet")]


def test_context_route_gives_the_cli_context_with_large_file_references(lcm_env: Path, tmp_path: Path) -> None:
    import json

    from tests.conftest import run_lcm

    project, transcript = make_project(tmp_path / "big")
    threshold = {"compaction.large_file_token_threshold": 100}
    service = DaemonService(load_config(project=project, overrides=threshold,
                                        plugins=build_plugins()), build_plugins(), threshold)

    async def scenario() -> dict[str, object]:
        async with await _client(service) as client:
            ingested = await client.post("/ingest", json={
                "project": str(project), "path": str(transcript), "session_id": SESSION, "compact": "none"})
            assert ingested.status_code == 200, ingested.text
            ctx = await client.post("/context", json={"project": str(project), "session_id": SESSION,
                                                      "budget_tokens": 1_000_000})
            assert ctx.status_code == 200, ctx.text
        await service.close()
        found: dict[str, object] = ctx.json()
        return found

    daemon_context = asyncio.run(scenario())
    assert "[Large file file_" in json.dumps(daemon_context)
    cli = run_lcm("--set", "compaction.large_file_token_threshold=100", "context", SESSION, "--budget", "1000000",
                  "--json", cwd=project)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == daemon_context

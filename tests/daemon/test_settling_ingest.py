"""A turn's last records written after the hook that announced its end (Copilot CLI flushes its event log after
its Stop hook has run) are stored without another hook event, and a daemon that stops looks once more first."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lcm_framework.config import load_config
from lcm_framework.daemon import service as service_module
from lcm_framework.daemon.service import DaemonService
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID


def _stored(service: DaemonService, project: Path) -> int:
    app = service.projects.app_for(project)
    with app.project(project) as storage:
        return sum(len(storage.conversations.list_messages(c.conversation_id))
                   for c in storage.conversations.find_conversations(CLAUDE_SAMPLE_ID))


def _project(tmp_path: Path) -> tuple[Path, Path, list[bytes]]:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    lines = CLAUDE_SAMPLE.read_bytes().splitlines(keepends=True)
    transcript = project / f"{CLAUDE_SAMPLE_ID}.jsonl"
    transcript.write_bytes(b"".join(lines[:-3]))
    return project, transcript, lines[-3:]


async def _stop(service: DaemonService, project: Path, transcript: Path) -> int:
    payload = {"session_id": CLAUDE_SAMPLE_ID, "transcript_path": str(transcript), "cwd": str(project)}
    await service.hook("Stop", payload, wait=True)
    return await service.run(_stored, service, project)


@pytest.mark.parametrize("stop_daemon", [False, True], ids=["while-running", "at-shutdown"])
def test_records_flushed_after_the_stop_hook_are_stored(lcm_env: Path, tmp_path: Path, stop_daemon: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "SETTLE_PAUSES_S", (0.2, 0.4, 30.0))
    project, transcript, rest = _project(tmp_path)
    whole = tmp_path / "whole"
    (whole / ".git").mkdir(parents=True)
    (whole / transcript.name).write_bytes(CLAUDE_SAMPLE.read_bytes())
    service = DaemonService(load_config(project=project, plugins=build_plugins()), build_plugins())

    async def scenario() -> tuple[int, int, int]:
        first = await _stop(service, project, transcript)
        everything = await _stop(service, whole, whole / transcript.name)
        if stop_daemon:
            await asyncio.sleep(0.8)  # past the short pauses: only the 30 s one is left, cut short by close
        with transcript.open("ab") as out:  # the agent's late flush: no hook event follows it
            out.writelines(rest)
        if not stop_daemon:
            for _ in range(50):
                if await service.run(_stored, service, project) == everything:
                    break
                await asyncio.sleep(0.1)
        await service.close()
        return first, everything, await asyncio.to_thread(_reopened, project)

    def _reopened(root: Path) -> int:
        again = DaemonService(load_config(project=root, plugins=build_plugins()), build_plugins())
        try:
            return _stored(again, root)
        finally:
            asyncio.run(again.close())

    first, everything, after = asyncio.run(scenario())
    assert first < everything
    assert after == everything


def test_a_stop_queued_before_its_transcript_is_written_is_retried_then_stored(lcm_env: Path, tmp_path: Path) -> None:
    from lcm_framework.daemon.hook_call import HookCall
    from lcm_framework.outbox import Outbox, outbox_path

    project, transcript, rest = _project(tmp_path)
    lines = transcript.read_bytes()
    transcript.unlink()  # a new session's log, not flushed yet when its first Stop hook runs
    service = DaemonService(load_config(project=project, plugins=build_plugins()), build_plugins())
    payload = {"session_id": CLAUDE_SAMPLE_ID, "transcript_path": str(transcript), "cwd": str(project)}

    async def scenario() -> tuple[int, int, str | None, int]:
        queued = await service.enqueue(HookCall.of("Stop", payload))
        assert queued["queued"]
        first = await service.drain_outbox()  # not written yet: left to be retried
        transcript.write_bytes(lines + b"".join(rest))
        with Outbox(outbox_path(lcm_env)) as box:
            box.retry_waiting_now()
            (event,) = box.events()
        again = await service.drain_outbox()
        stored = await service.run(_stored, service, project)
        await service.close()
        return first, again, event.last_error, stored

    first, again, error, stored = asyncio.run(scenario())
    assert (first, again) == (0, 1)
    assert error and stored > 0


def test_a_transcript_that_never_appears_is_given_up_after_the_wait(lcm_env: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from lcm_framework.daemon.hook_call import HookCall
    from lcm_framework.outbox import Outbox, outbox_path

    monkeypatch.setenv("LCM_DAEMON_TRANSCRIPT_WAIT_S", "0.5")
    project, transcript, _rest = _project(tmp_path)
    transcript.unlink()
    service = DaemonService(load_config(project=project, plugins=build_plugins()), build_plugins())
    payload = {"session_id": CLAUDE_SAMPLE_ID, "transcript_path": str(transcript), "cwd": str(project)}

    async def scenario() -> tuple[float | None, float | None]:
        await service.enqueue(HookCall.of("Stop", payload))
        await service.drain_outbox()
        with Outbox(outbox_path(lcm_env)) as box:
            (young,) = box.events()
        await asyncio.sleep(0.6)
        with Outbox(outbox_path(lcm_env)) as box:
            box.retry_waiting_now()
        await service.drain_outbox()
        with Outbox(outbox_path(lcm_env)) as box:
            (old,) = box.events()
        await service.close()
        return young.processed_at, old.processed_at

    young, old = asyncio.run(scenario())
    assert young is None and old is not None

"""The daemon's state: per-conversation locks, background work, the outbox consumer; per-project apps and read
scopes live in ``projects.ProjectScopes``.

Storage calls run in worker threads so requests for different projects
proceed concurrently; mutating operations on one conversation (ingest,
compact) hold an ``asyncio.Lock`` keyed by project and session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread

from ..assembly.restore import SESSION_START_SUMMARIES, SESSION_START_TOKENS
from ..errors import LcmError, TranscriptError
from ..ingest.errors import IngestError
from ..outbox import Outbox, OutboxEvent, backlog_report, outbox_path
from ..paths import project_id_for
from . import operations
from .consumer import DrainLoop, OutboxConsumer
from .hook_call import HookCall, project_of
from .projects import ProjectScopes

if TYPE_CHECKING:
    from ..config import Config
    from ..kernel.plugins import Plugins
    from ..memory.scope import MemoryScope

T = TypeVar("T")
log = logging.getLogger("lcm.daemon")

SETTLE_PAUSES_S = (0.5, 1.5, 3.0)
"""After the ingest of an event that ends a turn or a session, the transcript is looked at again after each of
these pauses and ingested again when it changed: an agent may write the turn's last records after the hook that
announced its end (Copilot CLI flushes its event log after its Stop hook has run)."""


class TranscriptNotWrittenYet(LcmError):
    """The transcript a hook event names is not there yet (an agent may write it after its hook ran): retried."""


class DaemonService:
    def __init__(self, config: Config, plugins: Plugins, overrides: Mapping[str, Any] | None = None) -> None:
        self.config = config
        self.plugins = plugins
        self.overrides = dict(overrides or {})
        self.started_at = time.time()
        self.projects = ProjectScopes(config, plugins, self.overrides, self.run)
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._in_flight = 0
        self._closing = asyncio.Event()
        self.consumer = OutboxConsumer(config.home, self.run, self.consume, _describe, _code, self._local_only)
        self._sync_projects: Any = None
        self.drain = DrainLoop(self.run, self._drain_worker, float(config.get("sync.interval_s")), _describe)

    # --- threads and locks ---------------------------------------------------

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking storage call in a worker thread, counted as in-flight work."""
        self._in_flight += 1
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
        finally:
            self._in_flight -= 1

    def lock(self, project: Path, session: str) -> asyncio.Lock:
        key = (project_id_for(project), session)
        found = self._locks.get(key)
        if found is None:
            found = self._locks[key] = asyncio.Lock()
        return found

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Background work (compaction after ingest); drained at shutdown."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- operations ---------------------------------------------------------

    async def ingest(self, project: Path, path: Path, *, session_id: str | None, format_id: str | None,
                     compact_mode: str | None, wait: bool, extra: Sequence[Path] = ()) -> dict[str, Any]:
        if not await self.run(regular_file, path):
            raise IngestError("no such file or directory", code="not_found")
        app = self.projects.app_for(project)
        key = session_id or str(path)
        async with self.lock(project, key):
            report = await self.run(operations.ingest, app, path, format_id=format_id, extra=extra)
        result: dict[str, Any] = {"ingest": report, "compaction": None}
        if compact_mode and session_id:
            if wait:
                result["compaction"] = await self.compact(project, session_id, mode=compact_mode)
            else:
                self.spawn(self._background_compact(project, session_id, compact_mode))
                result["compaction"] = "scheduled"
            for run in _runs_with_new_messages(report):  # each sub-agent run is compacted on its own
                self.spawn(self._background_compact(project, run, compact_mode))
        return result

    async def compact(self, project: Path, session_id: str | None, *, mode: str) -> dict[str, Any]:
        app = self.projects.app_for(project)
        async with self.lock(project, session_id or "*"):
            return await self.run(operations.compact, app, session_id, mode=mode)

    async def _background_compact(self, project: Path, session_id: str, mode: str) -> None:
        try:
            await self.compact(project, session_id, mode=mode)
        except Exception as exc:  # best effort: compaction failures never break ingestion
            log.warning("background %s compaction of a session failed: %s", mode, _describe(exc))

    async def enqueue(self, call: HookCall) -> dict[str, Any]:
        """Check a hook event, store it durably in the outbox and let the consumer process it.

        The hook gets its answer once the event is durable, without waiting
        for the ingest (hooks stay fast whatever the transcript's size). An event the agent sends before it
        writes a new session's transcript (``EventAction.before_transcript``) whose transcript is not written
        yet is not stored (``"queued": None``): a later event of the session ingests it. Any other event is
        stored even when its transcript is missing: it may be written just after the hook (see ``handle``).
        """
        event, project, path = call.event, call.project, call.transcript
        if path is not None and not await self.run(regular_file, path) and call.action.before_transcript:
            return {"event": event, "project": str(project), "queued": None}
        stored = await self.run(_capture, self.config.home, event, call.payload)
        self.wake_consumer()
        return {"event": event, "project": str(project), "queued": stored.seq}

    async def hook(self, event: str, payload: Mapping[str, Any], *, wait: bool = False) -> dict[str, Any]:
        """Handle one forwarded hook payload now (see ``handle``)."""
        return await self.handle(HookCall.of(event, payload), wait=wait)

    async def handle(self, call: HookCall, *, wait: bool = False, queued_at: float | None = None) -> dict[str, Any]:
        """Handle one agent hook event (from the ``/hook`` route or the outbox). The transcript of an outbox
        event (``queued_at``) may be missing for ``daemon.transcript_wait_s``: the event is then retried
        (``TranscriptNotWrittenYet``), and given up as a ``TranscriptError`` after that."""
        event, project, session_id, path = call.event, call.project, call.session_id, call.transcript
        action, compact_mode = call.action.action, call.action.compact
        result: dict[str, Any] = {"event": event, "project": str(project), "session_id": session_id}
        if action == "passive":
            return result  # promoted from the outbox (``consume``), where the event is durable first
        if path is not None:
            if await self.run(regular_file, path):
                agent = call.subagent_transcript
                extra = [agent] if agent is not None and await self.run(_regular_or_absent, agent) else []
                seen = await self.run(_signature, path)
                result.update(await self.ingest(project, path, session_id=session_id, format_id=None,
                                                compact_mode=compact_mode, wait=wait, extra=extra))
                if compact_mode:
                    self.spawn(self._settle(project, path, session_id, extra, compact_mode, seen))
            elif not call.action.before_transcript:
                wait_s = float(self.config.get("daemon.transcript_wait_s"))
                if queued_at is not None and time.time() - queued_at < wait_s:
                    raise TranscriptNotWrittenYet("the transcript named by the hook is not written yet")
                raise TranscriptError("the transcript named by the hook does not exist")
        if action == "restore":
            result["restore"] = await self.restored(project, session_id, source=call.source,
                                                    max_tokens=SESSION_START_TOKENS, limit=SESSION_START_SUMMARIES)
        return result

    async def _settle(self, project: Path, path: Path, session_id: str | None, extra: Sequence[Path],
                      compact_mode: str, seen: tuple[int, int] | None) -> None:
        """Ingest ``path`` again each time it changed after one of ``SETTLE_PAUSES_S`` (the pauses are cut
        short when the daemon stops: one last look is taken then)."""
        try:
            for pause in SETTLE_PAUSES_S:
                if not self._closing.is_set():
                    try:
                        await asyncio.wait_for(self._closing.wait(), timeout=pause)
                    except TimeoutError:
                        pass
                now = await self.run(_signature, path)
                if now is None:
                    return
                if now != seen:
                    seen = now
                    await self.ingest(project, path, session_id=session_id, format_id=None,
                                      compact_mode=compact_mode, wait=False, extra=extra)
                if self._closing.is_set():
                    return
        except Exception as exc:  # best effort: the event's own ingest has been done and answered
            log.warning("a transcript's settling ingest failed: %s", _describe(exc))

    async def restored(self, project: Path, session_id: str | None, *, source: str | None, max_tokens: int,
                       limit: int) -> dict[str, Any]:
        """The restored context of a session with the highest-confidence memories (``memory.restore_count``)
        of the project and the user-wide scope; their surfacing is recorded. A project nothing is stored for
        yet restores the user-wide memories only (and is not created)."""
        from ..memory.hints import session_memories
        from ..memory.store import record_surfacing

        app = self.projects.app_for(project)
        scopes = await self.memory_scopes(project)
        memories = await self.run(session_memories, scopes[0], scopes[1] if len(scopes) > 1 else None,
                                  int(app.config.get("memory.restore_count"))) if scopes else []
        result = await self.projects.read(project, operations.restore, session_id, max_tokens=max_tokens,
                                          limit=limit, source=source, memories=memories, missing_ok=True)
        for target in scopes:
            refs = [m.id for m in memories if m.id.startswith(target.prefix)]
            await self.run(record_surfacing, target.storage, refs, query=None)
        return result

    async def memory_scopes(self, project: Path) -> list[MemoryScope]:
        """The memory scopes a read for ``project`` sees, the project's own first, then the user-wide one:
        each only when something is stored in it (a read never creates a scope)."""
        from ..memory.scope import MemoryScope, user_wide_root
        from ..recall.semantic import lane_or_none

        app = self.projects.app_for(project)
        found = [(await self.projects.find_reader(project), False),
                 (await self.projects.find_reader(user_wide_root(app)), True)]
        embedder = lane_or_none(app.config, app.plugins)
        return [MemoryScope(storage, user_wide=user_wide, embedder=embedder) for storage, user_wide in found
                if storage is not None]

    async def prompt_recall(self, project: Path, prompt: str, session_id: str | None) -> dict[str, Any]:
        """Memories and summary snippets relevant to ``prompt``, from the project's and the user-wide scope."""
        from ..memory.hints import for_prompt

        app = self.projects.app_for(project)
        scopes = await self.memory_scopes(project)
        if not scopes:
            return {"items": [], "tokens": 0, "context": ""}
        return await self.run(for_prompt, scopes[0], scopes[1] if len(scopes) > 1 else None, prompt,
                              session_id=session_id, min_score=float(app.config.get("memory.recall_min_score")),
                              max_tokens=int(app.config.get("memory.recall_max_tokens")))

    # --- the outbox consumer and the team-sync drain ---------------------------

    async def consume(self, item: OutboxEvent, box: Outbox) -> Any:
        """Promote one outbox event locally: a passive event's learning, any other event's hook work."""
        call = HookCall.of(item.event, item.payload)
        if call.action.action != "passive":
            return await self.handle(call, queued_at=item.created_at)
        from ..scrub.gate import project_scrubber
        from ..sync.learning import fail_then_fix

        project = call.project
        app = self.projects.app_for(project)
        previous = await self.run(box.previous_tool_event, item)
        scrubber = project_scrubber(app)

        def learn() -> list[int]:
            from ..sync.learning import EDIT_TOOLS, co_edited_here

            with app.project(project) as storage:
                fixed = fail_then_fix(storage, item, previous, lambda text: scrubber.scrub_text(text)[0])
                found = [] if fixed is None else [fixed]
                if not app.storage.capabilities.passive_inbox:  # with an inbox, co-edits are counted team-wide
                    found += co_edited_here(storage, item, box.tool_events(str(project), sorted(EDIT_TOOLS), "edit"))
                return found

        return await self.run(learn)

    async def _local_only(self, payload: Mapping[str, Any]) -> bool:
        """Whether the event's backend has no inbox (it will never be delivered); unknown: not local only."""
        try:
            app = self.projects.app_for(project_of(payload))
            return not await self.run(lambda: app.storage.capabilities.passive_inbox)
        except LcmError:
            return False

    def _drain_worker(self) -> Any:
        """The team-sync worker when the backend has an inbox, else None (built in a worker thread)."""
        from ..sync.projects import AppProjects
        from ..sync.worker import DrainSettings, DrainWorker

        if not self.projects.app_for(self.config.project_root).storage.capabilities.passive_inbox:
            return None
        self._sync_projects = AppProjects(self.projects.app_for, lambda: self.projects.roots)
        return DrainWorker(self.config.home, self._sync_projects, DrainSettings.from_config(self.config),
                           env=self.config.env)

    def wake_consumer(self) -> None:
        self.consumer.wake()
        self.drain.wake()

    def start_consumer(self) -> None:
        self.consumer.start()
        self.drain.start()

    async def drain_outbox(self) -> int:
        """Process due outbox events now (see ``OutboxConsumer.drain``)."""
        return await self.consumer.drain()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "port": self.config.get("daemon.port"),
            "uptime_s": round(time.time() - self.started_at, 1),
            "backend": self.config.get("storage.backend"),
            "projects": self.projects.roots,
            "in_flight": self._in_flight,
            "background_tasks": len(self._tasks),
            "outbox": backlog_report(self.config.home),
            "drained_events": self.consumer.drained_events,
            "sync": {"running": not self.drain.closing, "passes": self.drain.passes, "applied": self.drain.applied,
                     "last_error": self.drain.last_error},
        }

    # --- shutdown -----------------------------------------------------------

    async def close(self, *, drain_timeout_s: float = 30.0) -> None:
        """Stop the consumer, let background work finish (bounded), then close every project's storage."""
        self._closing.set()
        await self.consumer.stop(drain_timeout_s)
        await self.drain.stop(drain_timeout_s)
        if self._sync_projects is not None:
            await self.run(self._sync_projects.close)
        if self._tasks:
            _done, pending = await asyncio.wait(set(self._tasks), timeout=drain_timeout_s)
            for task in pending:
                task.cancel()
        await self.projects.close()


def _runs_with_new_messages(report: Mapping[str, Any]) -> list[str]:
    """Session ids of the sub-agent runs an ingest gave new messages: its sub-agent files' and the runs
    kept in the session file itself."""
    found = [r["session_id"] for r in report.get("subagent_files", []) if r.get("messages") and r.get("session_id")]
    found += [sid for sid, (_cid, new) in (report.get("runs") or {}).items() if new]
    return list(dict.fromkeys(found))


def _capture(home: Path, event: str, payload: Mapping[str, Any]) -> OutboxEvent:
    with Outbox(outbox_path(home)) as box:
        return box.capture(event, payload)


def regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (symlinks followed): ``False`` when nothing is there. A directory,
    FIFO or device is refused for good (``not_regular``) without ever being opened: reading one would block
    or never end."""
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise IngestError(f"the transcript cannot be examined ({exc.strerror})", code="unreadable") from None
    if not stat.S_ISREG(found.st_mode):
        raise IngestError("the transcript is not a regular file (a directory, FIFO or device)", code="not_regular")
    return True


def _signature(path: Path) -> tuple[int, int] | None:
    """A transcript's size and modification time, ``None`` when it is gone."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


def _regular_or_absent(path: Path) -> bool:
    """``regular_file``, with anything but a regular file taken as absent (an optional companion file)."""
    try:
        return regular_file(path)
    except IngestError:
        return False


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "code", None) or type(exc).__name__)


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, LcmError) else type(exc).__name__



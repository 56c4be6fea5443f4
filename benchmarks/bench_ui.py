"""``lcm ui`` page times at 100k messages in one project (``--quick``: 10k), through real HTTP.

Data: ``bench_storage``'s Zipf vocabulary written as Claude Code sessions of 1,000 messages each (no message
repeated), imported with ``import_sources`` into one SQLite project; the newest session is compacted (its DAG and
context pages then have summaries) and 200 memories are stored. The explorer is served by uvicorn on the
loopback as ``lcm ui`` serves it; each page is fetched ``REPEAT`` times (after one warm-up) by an httpx client
with the bearer token, HTML and JSON alternately. Figures: p50 and p95 wall time per page against the target
(p95 < 200 ms). ``/health`` runs ``lcm doctor`` (a quick_check of every database): reported, not targeted.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

TARGET_MS = 200.0
REPEAT = 30


def _serve(app: Any) -> tuple[str, str, Any]:
    import uvicorn

    from lcm_framework.daemon_client.files import ensure_token
    from lcm_framework.ui.server import build_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    token = ensure_token(Path(app.config.home))
    asgi, _ = build_app(app, token, port)
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="on",
                                           log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", token, server


def main(quick: bool = False) -> None:
    import logging

    import httpx

    from benchmarks.bench_recall import _app
    from benchmarks.bench_storage import SESSION_MESSAGES, Vocabulary, p95, write_sessions
    from lcm_framework.compaction import CompactionEngine, Mode
    from lcm_framework.ingest.api import import_sources
    from lcm_framework.memory.store import remember
    from lcm_framework.scrub.gate import project_scrubber

    n = 10_000 if quick else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LCM_HOME"] = str(Path(tmp) / "home")
        sessions = Path(tmp) / "sessions"
        sessions.mkdir()
        write_sessions(sessions, Vocabulary().messages(n))
        root = Path(tmp) / "project"
        (root / ".git").mkdir(parents=True)
        app = _app(root)
        started = time.perf_counter()
        import_sources(app, [sessions], project=root)
        with app.project() as storage:
            newest = storage.conversations.list_conversations()[-1]
            CompactionEngine(app).compact(storage, newest.conversation_id, Mode.FULL)
            scrubber = project_scrubber(app)
            vocabulary = Vocabulary()
            for text in list(vocabulary.messages(200, seed=3)):
                remember(storage, text[:300], scrubber=scrubber)
            session = newest.session_id
            summary = storage.summaries.list_summaries(newest.conversation_id)[0].summary_id
            middle = storage.conversations.list_messages(newest.conversation_id, limit=SESSION_MESSAGES // 2)[-1]
        print(f"{n:,} messages in {n // SESSION_MESSAGES} sessions imported, one compacted, 200 memories "
              f"({time.perf_counter() - started:.0f} s)")
        logging.getLogger("httpx").setLevel(logging.WARNING)
        base, token, server = _serve(app)
        pid = app.project_ref().project_id
        pages = {
            "projects": "/projects", "sessions": f"/p/{pid}/sessions", "transcript": f"/p/{pid}/s/{session}",
            "transcript, a later page": f"/p/{pid}/s/{session}?after={SESSION_MESSAGES // 2}",
            "message permalink": f"/p/{pid}/m/{middle.message_id}", "summary DAG": f"/p/{pid}/s/{session}/summaries",
            "summary": f"/p/{pid}/summary/{summary}", "context": f"/p/{pid}/s/{session}/context",
            "context, budget 2000": f"/p/{pid}/s/{session}/context?budget=2000",
            "session start": f"/p/{pid}/s/{session}/start",
            "search": f"/p/{pid}/search?q=connection+timeout+retry", "memories": f"/p/{pid}/memories",
            "live poll": f"/p/{pid}/s/{session}?after={SESSION_MESSAGES - 1}&fragment=1", "health": "/health",
        }
        try:
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
                print(f"{'page':<26} {'p50 ms':>8} {'p95 ms':>8}  target p95 < {TARGET_MS:.0f} ms")
                for name, path in pages.items():
                    repeat = 3 if name == "health" else REPEAT
                    times = []
                    for i in range(repeat + 1):
                        url = path if i % 2 or "fragment" in path or "/m/" in path else _json(path)
                        t0 = time.perf_counter()
                        answer = client.get(url)
                        elapsed = (time.perf_counter() - t0) * 1000
                        assert answer.status_code in (200, 303), (url, answer.status_code, answer.text[:200])
                        if i:
                            times.append(elapsed)
                    times.sort()
                    high = p95(times) if len(times) >= 20 else times[-1]
                    verdict = "(not targeted)" if name == "health" else ("met" if high < TARGET_MS else "NOT met")
                    print(f"{name:<26} {times[len(times) // 2]:>8.1f} {high:>8.1f}  {verdict}")
        finally:
            server.should_exit = True
            app.close()


def _json(path: str) -> str:
    where, sep, query = path.partition("?")
    return f"{where}.json{sep}{query}"

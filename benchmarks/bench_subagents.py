"""Sub-agent runs: what linking them costs at import, and what a hook pays for a session's sub-agent files.

Data: one Claude Code session that starts R runs (``subagents/agent-<id>.jsonl``, 40 turns each;
``--quick``: fewer), each after 25 turns of the session's own work (so the parent grows with R, as a
long session that starts many runs does). Baselines measured in the same run on the same records:

* import: the same files written as R + 1 plain sessions (no sidechain marks, no agent ids, no
  ``Agent`` calls to match), so the same bytes, records and messages are imported with nothing to link;
* hook: ``operations.ingest`` (what Stop runs) of the same, already imported, session file without its
  ``subagents/`` folder, against the session with its R unchanged sub-agent files.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.daemon import operations
from lcm_framework.ingest import import_sources
from lcm_framework.kernel.plugins import build_plugins
from tests.ingest.subagent_layouts import SESSION, Chain, parent_session, project_dir, write_jsonl

TURNS = 40
WORK = 25
"""The parent's own turns (a file read and its result) before each call."""


def _run(aid: str, n: int) -> list[dict[str, Any]]:
    chain = Chain(sidechain=True, agent_id=aid, start=1000 * (n + 1))
    chain.add("user", f"Survey part {aid} of the repository")
    for t in range(TURNS):
        call = f"toolu_{aid}_{t}"
        chain.add("assistant", [{"type": "text", "text": f"Step {t}: reading module {t} of part {aid}."},
                                {"type": "tool_use", "id": call, "name": "Read", "input": {"path": f"src/m{t}.py"}}])
        chain.add("user", [{"type": "tool_result", "tool_use_id": call,
                            "content": f"def handler_{t}():\n    return retry(backoff={t})\n" * 8}])
    chain.add("assistant", [{"type": "text", "text": f"Part {aid}: every module retries with backoff."}])
    return chain.records


def write_linked(root: Path, runs: int) -> Path:
    folder = project_dir(root)
    ids = [f"a{n:06x}" for n in range(runs)]
    session = write_jsonl(folder / f"{SESSION}.jsonl",
                          parent_session([(f"toolu_task_{a}", f"Survey part {a} of the repository", a) for a in ids],
                                         tool="Agent", work=WORK))
    for n, aid in enumerate(ids):
        write_jsonl(folder / SESSION / "subagents" / f"agent-{aid}.jsonl", _run(aid, n))
    return session


def write_plain(root: Path, runs: int) -> Path:
    """The same records as plain sessions: every file its own session id, nothing marked or linked."""
    folder = project_dir(root)
    parent = [{**r, "message": {**r["message"], "content": _unlinked(r["message"]["content"])}}
              for r in parent_session([(f"toolu_task_{n}", f"Survey part {n}", None) for n in range(runs)], work=WORK)]
    session = write_jsonl(folder / f"{SESSION}.jsonl", parent)
    for n in range(runs):
        sid = f"{n:08x}-0000-4000-8000-000000000000"
        records = [{k: v for k, v in {**r, "isSidechain": False, "sessionId": sid}.items() if k != "agentId"}
                   for r in _run(f"a{n:06x}", n)]
        write_jsonl(folder / f"{sid}.jsonl", records)
    return session


def _unlinked(content: Any) -> Any:
    """Tool calls renamed so no ``Agent`` call starts a run."""
    if not isinstance(content, list):
        return content
    return [{**b, "name": "Survey"} if isinstance(b, dict) and b.get("name") == "Agent" else b for b in content]


def _app(project: Path, home: Path) -> App:
    project.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LCM_HOME": str(home)}
    return App(load_config(project=project, env=env, plugins=build_plugins(env)), build_plugins(env))


def _import_once(tmp: Path, name: str, write: Any, runs: int) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, messages, runs linked to their call) of one import into a fresh home."""
    base = tmp / name
    write(base / "claude", runs)
    app = _app(base / "project", base / "home")
    try:
        started, cpu = time.perf_counter(), time.process_time()
        report = import_sources(app, [project_dir(base / "claude")], project=app.config.project_root, workers=1)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert not report.errors, report.errors
        with app.project() as st:
            links = sum(1 for link in st.conversations.list_subagent_links() if link.parent_message_id)
    finally:
        app.close()
        shutil.rmtree(base)
    return wall, cpu, report.messages, links


def _imports(tmp: Path, runs: int, reps: int) -> dict[str, tuple[float, float, int, int]]:
    """Median wall and CPU seconds of each kind, the kinds interleaved so machine load hits both alike."""
    samples: dict[str, list[tuple[float, float, int, int]]] = {"linked": [], "plain": []}
    for rep in range(reps):
        for kind, write in (("linked", write_linked), ("plain", write_plain))[:: 1 if rep % 2 == 0 else -1]:
            samples[kind].append(_import_once(tmp, f"{kind}{rep}", write, runs))
    return {kind: (statistics.median(s[0] for s in got), statistics.median(s[1] for s in got), got[0][2], got[0][3])
            for kind, got in samples.items()}


def _hook_ms(tmp: Path, runs: int, reps: int) -> tuple[float, float]:
    base = tmp / "hook"
    session = write_linked(base / "claude", runs)
    app = _app(base / "project", base / "home")
    try:
        operations.ingest(app, session)
        with_runs = []
        for _ in range(reps):
            started = time.perf_counter()
            operations.ingest(app, session)
            with_runs.append((time.perf_counter() - started) * 1000)
        shutil.rmtree(session.with_suffix(""))
        alone = []
        for _ in range(reps):
            started = time.perf_counter()
            operations.ingest(app, session)
            alone.append((time.perf_counter() - started) * 1000)
    finally:
        app.close()
    return statistics.median(with_runs), statistics.median(alone)


def main(quick: bool) -> None:
    runs, reps = (10, 2) if quick else (40, 5)
    with tempfile.TemporaryDirectory(prefix="lcm-bench-subagents-") as name:
        tmp = Path(name)
        _import_once(tmp, "warm-up", write_plain, 2)  # imports, plugins and the scrubber, once
        got = _imports(tmp, runs, reps)
        (linked, linked_cpu, messages, links), (plain, plain_cpu, plain_messages, _) = got["linked"], got["plain"]
        print(f"import, {runs} runs of {2 * TURNS + 2} messages + their session of {2 * WORK} own messages per "
              f"run ({messages} messages), "
              f"median of {reps}, interleaved:")
        print(f"  baseline, the same records as plain sessions ({plain_messages} messages): "
              f"{plain:.3f} s wall, {plain_cpu:.3f} s CPU")
        print(f"  as linked sub-agent runs ({links} of {runs} linked to their call): {linked:.3f} s wall, "
              f"{linked_cpu:.3f} s CPU ({linked_cpu / plain_cpu:.2f}x the baseline's CPU)")
        with_runs, alone = _hook_ms(tmp, runs, 5 if quick else 15)
        print(f"hook ingest of the unchanged session: {alone:.1f} ms alone (baseline), {with_runs:.1f} ms with its "
              f"{runs} unchanged sub-agent files ({(with_runs - alone) / runs:.2f} ms per file)")

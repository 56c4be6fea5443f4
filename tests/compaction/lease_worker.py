"""Run by test_lease_processes in a subprocess: a full sweep with a slow scripted summarizer.

``lease_worker.py ROOT OUT``: compact, then write what happened to OUT.
``lease_worker.py ROOT OUT hang``: every leaf pass is its own write; once the first
summary is committed, touch ``OUT.committed`` and block inside the summarizer
(holding the lease) until the test kills the process.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lcm_framework.compaction import CompactionEngine, CompactionSettings, Mode
from lcm_framework.storage.contracts import ProjectStorage
from tests.compaction.helpers import ScriptedSummarizer, scripted_app


class Slow(ScriptedSummarizer):
    calls: list[float]
    storage: ProjectStorage
    conversation_id: int
    committed: Path | None = None

    def summarize(self, request):  # type: ignore[no-untyped-def]
        if self.committed is not None and sum(self.storage.summaries.count_by_depth(self.conversation_id).values()):
            self.committed.touch()
            time.sleep(600)  # killed here, mid-sweep
        self.calls.append(time.time())
        time.sleep(0.05)
        return super().summarize(request)


def main(root: str, out: str, hang: bool) -> None:
    app, summarizer = scripted_app(Path(root), {})
    settings = CompactionSettings.from_config(app.config)
    slow = Slow(summarizer.script)
    slow.calls = []
    with app.project() as storage:
        slow.storage = storage
        slow.conversation_id = storage.conversations.find_conversations("shared")[0].conversation_id
        if hang:
            slow.committed = Path(out + ".committed")
            settings = replace(settings, max_pending_passes=1)
        report = CompactionEngine(app, summarizer=slow, settings=settings).compact(
            storage, slow.conversation_id, Mode.FULL, wait_seconds=60
        )
    Path(out).write_text(json.dumps({"calls": slow.calls, "created": report.summaries_created,
                                     "busy": report.busy}))
    app.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:] == ["hang"])

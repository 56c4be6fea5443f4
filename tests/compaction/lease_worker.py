"""Run by test_lease_processes in a subprocess: a full sweep with a slow scripted summarizer."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lcm_framework.compaction import CompactionEngine, Mode
from tests.compaction.helpers import ScriptedSummarizer, scripted_app


class Slow(ScriptedSummarizer):
    calls: list[float]

    marker: Path | None = None

    def summarize(self, request):  # type: ignore[no-untyped-def]
        if self.marker is not None:
            self.marker.touch()
        self.calls.append(time.time())
        time.sleep(0.05)
        return super().summarize(request)


def main(root: str, out: str) -> None:
    app, summarizer = scripted_app(Path(root), {})
    slow = Slow(summarizer.script)
    slow.calls = []
    slow.marker = Path(out + ".started")
    with app.project() as storage:
        cid = storage.conversations.find_conversations("shared")[0].conversation_id
        report = CompactionEngine(app, summarizer=slow).compact(storage, cid, Mode.FULL, wait_seconds=60)
    Path(out).write_text(json.dumps({"calls": slow.calls, "created": report.summaries_created,
                                     "busy": report.busy}))
    app.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

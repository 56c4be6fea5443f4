"""Where an import of a source starts: after its checkpoint only when the checkpoint still describes it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from lcm_framework.ingest.prefix import PrefixHash
from lcm_framework.ingest.resume import ResumePoint, resume_point
from lcm_framework.ingest.source import BoundSource
from lcm_framework.ingest.state import STATE_VERSION, Counters, ReplayCache
from lcm_framework.storage.models import Checkpoint, FormatIdentity

FMT = FormatIdentity("claude-code", "claude-jsonl", "v1")
DONE = b'{"a":1}\n{"b":2}\n'


def checkpoint(offset: int, digest: str, scrubber: str = "scrub/1") -> Checkpoint:
    state = {"v": STATE_VERSION, "session_id": "s1", "next_seq": 2, "next_ordinal": 2, "open_tail": False,
             "runs": {}, "format": {"client_name": FMT.client_name, "format_name": FMT.format_name,
                                    "format_version": FMT.format_version}}
    return Checkpoint("key", 1, offset, digest, scrubber, 1, 2, 0, 0, json.dumps(state))


def point(tmp_path: Path, data: bytes, cp: Checkpoint) -> tuple[ResumePoint, PrefixHash]:
    (tmp_path / "s.jsonl").write_bytes(data)
    prefix = PrefixHash(BoundSource(tmp_path, "s.jsonl"))
    found = resume_point(cp, prefix, force_rescan=False, session_id="s1", fmt=FMT, scrubber_version="scrub/1",
                         cache=ReplayCache(), project_id="p")
    return found, prefix


FRESH = ResumePoint(Counters(), 0, 0, -1)


def test_a_matching_checkpoint_resumes_after_its_offset(tmp_path: Path) -> None:
    found, prefix = point(tmp_path, DONE + b'{"c":3}\n', checkpoint(len(DONE), hashlib.sha256(DONE).hexdigest()))
    assert (found.start, found.replay_until, found.resumed) == (0, len(DONE), True)
    assert prefix.upto == len(DONE)


@pytest.mark.parametrize("case", ["other scrubber", "file shrank", "prefix changed"])
def test_a_checkpoint_that_no_longer_describes_the_source_starts_fresh(tmp_path: Path, case: str) -> None:
    digest = hashlib.sha256(DONE).hexdigest()
    data, cp = {
        "other scrubber": (DONE + b"[1]\n", checkpoint(len(DONE), digest, scrubber="scrub/0")),
        "file shrank": (DONE[:5], checkpoint(len(DONE), digest)),
        "prefix changed": (b'{"a":9}\n{"b":2}\n[1]\n', checkpoint(len(DONE), digest)),
    }[case]
    found, prefix = point(tmp_path, data, cp)
    assert found == FRESH and not found.resumed
    assert prefix.upto == 0  # hashing starts over from byte 0

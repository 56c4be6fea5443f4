"""``lcm search`` output a person can read: relevance as a share, a summary's covered span, the project's
root, lines that fit the terminal, colour only on a terminal without NO_COLOR; ``--json`` is the tool's shape."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from lcm_framework.kernel.arguments import call
from lcm_framework.storage.models import NewSummary, SummaryKind
from tests.compaction.helpers import T0, ingest, make_app, new_message, project_dir
from tests.conftest import OFFLINE_ENV
from tests.recall.test_cli import lcm

TURNS = ["The invoice worker crashed at midnight again, right after the nightly export started running.",
         "It was the disk quota on the batch host; the export filled the scratch volume to the brim.",
         "Lunch at noon?"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    here = project_dir(tmp_path)
    app = make_app(here)
    with app.project() as storage:
        cid, stored = ingest(storage, "7c1f3a52-aaaa-bbbb-cccc-000000000001", [
            new_message(n, text) for n, text in enumerate(TURNS)])
        storage.summaries.create_summary(NewSummary(
            "sum_00000000000000aa", cid, SummaryKind.LEAF, 0, "invoice worker crash: disk quota on the batch host",
            12, stored[0].created_at, stored[1].created_at, 0, source_message_ids=[m.message_id for m in stored]))
    app.close()
    return here


def test_text_output_is_readable_and_fits_the_terminal(root: Path) -> None:
    code, out, err = lcm(root, "search", "invoice worker disk quota", "--all-projects")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("  1. sum_00000000000000aa  summary  2026-02-17 07:00 .. 07:01")  # its span
    assert "%" in lines[0] and "0.0" not in out  # a share, not a reciprocal-rank score
    assert f"project {root}" in out and "[" not in lines[0]  # the root, not an id prefix
    assert any(line.strip().startswith("- msg_") for line in lines)  # its matching turns under it
    assert "\x1b[" not in out  # not a terminal: no colour
    narrow = run_search(root, "invoice worker disk quota", columns=50)
    assert narrow and all(len(line) <= 50 for line in narrow.splitlines())


def run_search(root: Path, query: str, *, columns: int, tty: bool = False, no_color: bool = False) -> str:
    home = root.parent / "home" / ".lcm"
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "HOME": str(home.parent), "COLUMNS": str(columns)}
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = "1"
    command = [sys.executable, "-m", "lcm_framework.cli.main", "--project", str(root), "search", query]
    if not tty:
        return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120).stdout
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(command, cwd=root, env=env, stdout=follower, stderr=subprocess.DEVNULL, timeout=120)
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert done.returncode == 0
        return b"".join(chunks).decode()
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


def test_colour_only_on_a_terminal_and_never_with_no_color(root: Path) -> None:
    assert "\x1b[1;36msum_00000000000000aa\x1b[0m" in run_search(root, "invoice worker disk quota", columns=100,
                                                                 tty=True)
    assert "\x1b[" not in run_search(root, "invoice worker disk quota", columns=100, tty=True, no_color=True)


def test_json_is_the_lcm_search_tool_result(root: Path) -> None:
    code, out, _ = lcm(root, "search", "invoice worker disk quota", "--json")
    assert code == 0
    app = make_app(root)
    try:
        assert json.loads(out) == call(app, app.plugins.capabilities()["lcm_search"],
                                       {"query": "invoice worker disk quota"})
    finally:
        app.close()
    document = json.loads(out)
    (summary,) = document["results"]
    assert summary["span"] == ["2026-02-17T07:00:00Z", "2026-02-17T07:01:00Z"] and 0 < summary["score"] <= 1
    assert "created_at" not in summary and "rank" not in summary  # its date is the span, its rank the order
    assert [h["id"] for h in summary["hits"]] == ["msg_1", "msg_2"] and T0.year == 2026
    assert document["projects"] == [{"project_id": document["projects"][0]["project_id"], "root": str(root)}]


def test_a_summary_only_repeating_a_listed_turn_is_left_out(tmp_path: Path) -> None:
    from lcm_framework.recall.search import search

    here = project_dir(tmp_path)
    app = make_app(here)
    try:
        with app.project() as storage:
            cid, stored = ingest(storage, "7c1f3a52-aaaa-bbbb-cccc-000000000002", [
                new_message(0, "The staging deploy key was rotated on Friday by the platform team."),
                new_message(1, "Lunch at noon?")])
            for n, text in enumerate((f"[{stored[0].created_at:%Y-%m-%d %H:%M}] user: {stored[0].content}",
                                      "Deploy keys: the staging one rotates monthly.")):
                storage.summaries.create_summary(NewSummary(
                    f"sum_00000000000000b{n}", cid, SummaryKind.LEAF, 0, text, 20, stored[0].created_at,
                    stored[1].created_at, 0, source_message_ids=[m.message_id for m in stored]))
            found = [r.hit.id for r in search(storage, "staging deploy key rotated", limit=5)]
    finally:
        app.close()
    assert found[0] == f"msg_{stored[0].message_id}"
    assert "sum_00000000000000b0" not in found  # it quotes the turn already listed, and heads no new one
    assert "sum_00000000000000b1" in found  # a summary saying something else stays

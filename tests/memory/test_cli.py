"""``lcm memory`` as real subprocesses: store, dedup, list, show, feedback, review, forget, the user-wide scope."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compaction.helpers import project_dir
from tests.conftest import run_lcm


def lcm(root: Path, *args: str) -> tuple[int, str, str]:
    home = root.parent / "home"
    done = run_lcm("--project", str(root), *args, cwd=root, env={"LCM_HOME": str(home), "HOME": str(root.parent)})
    return done.returncode, done.stdout, done.stderr


def ok(root: Path, *args: str) -> object:
    code, out, err = lcm(root, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def ids(result: object) -> list[str]:
    assert isinstance(result, dict)
    return [m["id"] for m in result["memories"]]


def test_memory_commands_end_to_end(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    first = ok(root, "memory", "add", "Use uv instead of pip for installing packages", "--tag", "tooling",
               "--tag", "python", "--confidence", "0.6")
    assert isinstance(first, dict) and first["created"] and first["id"] == "mem_1"
    again = ok(root, "memory", "add", "Install packages with uv, not pip")
    assert isinstance(again, dict) and not again["created"] and again["confidence"] > first["confidence"]
    ok(root, "memory", "add", "Never commit generated fixtures", "--tag", "git")
    assert ids(ok(root, "memory", "list", "--tag", "python")) == ["mem_1"]
    assert ids(ok(root, "memory", "search", "fixtures")) == ["mem_2"]
    assert lcm(root, "memory", "search", "kubernetes")[0] == 1
    useful = ok(root, "memory", "feedback", "mem_1", "--useful")
    assert isinstance(useful, dict) and useful["confidence"] > again["confidence"]
    shown = ok(root, "memory", "show", "mem_1")
    assert isinstance(shown, dict) and shown["recall"]["useful"] == 1 and shown["tags"] == ["tooling", "python"]
    code, out, _ = lcm(root, "memory", "show", "mem_1")
    assert code == 0 and "tags: tooling, python" in out and "useful 1" in out
    assert ok(root, "memory", "archive", "mem_2")["archived"]  # type: ignore[index]
    assert ids(ok(root, "memory", "list")) == ["mem_1"]
    assert not ok(root, "memory", "revive", "mem_2")["archived"]  # type: ignore[index]
    review = ok(root, "memory", "review", "--days", "1")
    assert isinstance(review, dict) and review["candidates"] == []
    stats = ok(root, "memory", "stats")
    assert isinstance(stats, dict)
    assert {r["id"]: r["useful"] for r in stats["memories"]} == {"mem_1": 1, "mem_2": 0}
    assert ok(root, "memory", "forget", "mem_2") == {"forgotten": "mem_2"}
    code, _, err = lcm(root, "memory", "show", "mem_2")
    assert code != 0 and "no memory 2" in err


def test_user_wide_memories_are_shared_by_projects(tmp_path: Path) -> None:
    one, two = project_dir(tmp_path, "one"), project_dir(tmp_path, "two")
    stored = ok(one, "memory", "add", "--global", "Answer in British English")
    assert isinstance(stored, dict) and stored["id"] == "gmem_1"
    assert ids(ok(two, "memory", "list")) == []
    assert ids(ok(two, "memory", "list", "--global")) == ["gmem_1"]
    shown = ok(two, "memory", "show", "gmem_1")  # the id names its scope
    assert isinstance(shown, dict) and shown["id"] == "gmem_1"
    code, _, err = lcm(two, "memory", "show", "--global", "mem_1")
    assert code == 2 and "project memory" in err

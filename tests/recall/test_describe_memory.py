"""``lcm describe mem_N``: a memory in full, with where it came from."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compaction.helpers import project_dir
from tests.conftest import run_lcm


def test_describe_shows_a_memory_with_its_metadata(tmp_path: Path) -> None:
    root = project_dir(tmp_path)

    def lcm(*args: str) -> dict[str, object]:
        done = run_lcm("--project", str(root), *args, cwd=root)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    added = lcm("memory", "add", "Orders API paginates with opaque cursors", "--tag", "api", "--json")
    described = lcm("describe", str(added["id"]), "--json")
    assert described["kind"] == "memory" and described["id"] == added["id"]
    assert described["content"] == "Orders API paginates with opaque cursors"
    assert described["metadata"]["tags"] == ["api"]  # type: ignore[index]
    assert described["metadata"]["origin"] == "user"  # type: ignore[index]

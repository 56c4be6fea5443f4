"""No module of the core names an agent: agents exist only as the integrations plugins register."""

from __future__ import annotations

import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "lcm_framework"
AGENT_NAMES = re.compile(r"claude|codex|gemini", re.IGNORECASE)


def test_no_core_module_names_an_agent() -> None:
    found = {(path.relative_to(CORE).as_posix(), line.strip())
             for path in sorted(CORE.rglob("*")) if path.is_file() and path.suffix in (".py", ".pyi", ".toml", ".j2")
             for line in path.read_text(encoding="utf-8").splitlines() if AGENT_NAMES.search(line)}
    assert not found, f"core modules naming an agent (move the knowledge into its plugin): {sorted(found)}"

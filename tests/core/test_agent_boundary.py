"""No module of the core names an agent: agents exist only as the integrations plugins register."""

from __future__ import annotations

import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "lcm_framework"
AGENT_NAMES = re.compile(r"claude|codex|gemini", re.IGNORECASE)
ALLOWED = {
    # litellm's model prefix for Google's Gemini API and the variables holding its key (the summarizer's
    # credential check), not the Gemini CLI agent. It belongs with the summarizer plugin's settings.
    ("diagnostics.py", '"gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),'),
}


def test_no_core_module_names_an_agent() -> None:
    found = {(path.relative_to(CORE).as_posix(), line.strip())
             for path in sorted(CORE.rglob("*")) if path.is_file() and path.suffix in (".py", ".pyi", ".toml", ".j2")
             for line in path.read_text(encoding="utf-8").splitlines() if AGENT_NAMES.search(line)}
    assert found - ALLOWED == set(), "core modules naming an agent (move the knowledge into its plugin)"
    assert not ALLOWED - found, f"stale allowances: {ALLOWED - found}"

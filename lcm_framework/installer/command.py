"""The command line agents run to reach LCM, and recognising it again at uninstall."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

MODULE = "lcm_framework.cli.main"


def lcm_argv() -> list[str]:
    """The absolute ``lcm`` executable of this installation (or ``python -m`` when there is none)."""
    beside = Path(sys.executable).parent / "lcm"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("lcm")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", MODULE]


def command_line(*args: str) -> str:
    return shlex.join([*lcm_argv(), *args])


def lcm_verb(command: str) -> list[str] | None:
    """The arguments after the LCM executable when ``command`` runs LCM, else ``None``."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    for i, token in enumerate(tokens):
        name = os.path.basename(token)
        if name in ("lcm", "lcm.exe") or (token == MODULE and i > 0 and tokens[i - 1] == "-m"):
            return tokens[i + 1:]
    return None


def is_lcm_hook(command: str) -> bool:
    """Whether a hook command line runs ``lcm hook`` (one LCM installed, in any of its spellings)."""
    verb = lcm_verb(command)
    return bool(verb) and verb[0] == "hook"  # type: ignore[index]

"""LCM's marked block in Codex's ``config.toml`` (``[mcp_servers.lcm]``), added and removed as text.

The rest of the file is never parsed-and-rewritten, so comments, ordering
and formatting survive byte for byte.
"""

from __future__ import annotations

import json
import tomllib

from ..errors import LcmError

BEGIN = "# >>> lcm: managed by `lcm install`; `lcm uninstall` removes this block"
END = "# <<< lcm"


def block(argv: list[str]) -> str:
    command, args = argv[0], [*argv[1:], "mcp"]
    return "\n".join([
        BEGIN,
        "[mcp_servers.lcm]",
        f"command = {json.dumps(command)}",
        f"args = [{', '.join(json.dumps(a) for a in args)}]",
        END,
    ]) + "\n"


def has_foreign_lcm_server(text: str) -> bool:
    """True when ``[mcp_servers.lcm]`` exists outside our block (the user's own entry)."""
    try:
        data = tomllib.loads(remove(text))
    except tomllib.TOMLDecodeError as exc:
        raise LcmError(f"Codex config.toml is not valid TOML ({exc}); fix it, then run again") from None
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and "lcm" in servers


def add(text: str, argv: list[str]) -> str:
    """``text`` with our block (replacing an older copy of it) appended at the end."""
    base = remove(text)
    if base and not base.endswith("\n"):
        base += "\n"
    separator = "\n" if base.strip() else ""
    return (base if base.strip() else "") + separator + block(argv)


def remove(text: str) -> str:
    """``text`` without our block (and the blank line install put before it)."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    if end < 0:
        raise LcmError("Codex config.toml has the start of LCM's block but not its end; fix it by hand")
    end += len(END)
    if text[end:end + 1] == "\n":
        end += 1
    head = text[:start]
    if head.endswith("\n\n"):
        head = head[:-1]
    return head + text[end:]

"""What an agent integration plugin implements (``lcm_register_agents``) and the helpers it installs with.

``AgentIntegration`` is the contract; ``HookEvent`` and ``AgentStatus`` are what it declares and reports, and
``HookProtocol`` is what its hook protocol module provides (its agent's hook JSON read as LCM's, and LCM's
context written back as the agent reads it; that module imports this one only under TYPE_CHECKING).
Installing edits the agent's own files through ``FileChange`` (written atomically, with a backup), built
with the JSON (``jsonfile``, ``edit_json``, ``load_json``, ``hook_entries``, ``installed_events``) and TOML
(``tomlkeys``) editors that keep a user's formatting and remove only what LCM added.
"""

from ..agents.contracts import AgentIntegration, AgentStatus, HookEvent, HookProtocol
from ..installer import jsonfile, tomlkeys
from ..installer.agent_files import (
    MCP_NAME,
    add_mcp_server,
    agent_present,
    edit_json,
    has_mcp_server,
    home_dir,
    hook_entries,
    installed_events,
    load_json,
    mcp_argv,
    mcp_spec,
)
from ..installer.changes import FileChange, read_text
from ..installer.command import is_lcm_hook

__all__ = [
    "MCP_NAME",
    "AgentIntegration",
    "AgentStatus",
    "FileChange",
    "HookEvent",
    "HookProtocol",
    "add_mcp_server",
    "agent_present",
    "edit_json",
    "has_mcp_server",
    "home_dir",
    "hook_entries",
    "installed_events",
    "is_lcm_hook",
    "jsonfile",
    "load_json",
    "mcp_argv",
    "mcp_spec",
    "read_text",
    "tomlkeys",
]

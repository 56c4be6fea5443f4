"""``lcm install`` / ``lcm uninstall``: merge LCM's hooks and MCP server into agent configuration.

Every change is computed as text first (``FileChange``), so ``--dry-run``
prints a unified diff of exactly what would be written, a second install is a
no-op, and uninstall removes exactly the entries install added (recognised by
their ``lcm hook`` / ``lcm mcp`` commands and the TOML keys holding LCM's values).
What to change for each agent comes from its integration (``lcm_framework.agents``).
"""

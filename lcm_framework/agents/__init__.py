"""The agent extension point: what a plugin declares to wire LCM into a coding agent (``lcm_register_agents``)."""

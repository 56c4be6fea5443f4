"""Built-in plugin: the agent-facing recall tools lcm_grep, lcm_search, lcm_describe, lcm_expand."""

"""Built-in plugin: the agent-facing recall tools lcm_grep, lcm_search, lcm_describe, lcm_expand (the operations
layer's verbs) and the memory tools lcm_store, lcm_feedback."""

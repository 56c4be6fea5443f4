"""OpenCode sessions (``opencode/session-jsonl/v1``) and its LCM plugin file as a third-party LCM plugin."""

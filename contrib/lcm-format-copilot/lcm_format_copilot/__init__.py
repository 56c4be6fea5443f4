"""GitHub Copilot CLI session event logs (``copilot-cli/events-jsonl/v1``) and hooks as a third-party LCM plugin."""

"""Claude Code transcripts (``claude-code/claude-jsonl/v1``) as an LCM format plugin."""

"""Codex CLI rollouts (``codex/codex-jsonl/v1``) as an LCM format plugin."""

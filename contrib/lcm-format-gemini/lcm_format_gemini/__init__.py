"""Gemini CLI chat recordings (``gemini-cli/gemini-jsonl/v1``) as a third-party LCM format plugin."""

"""Qwen Code chat recordings (``qwen-code/qwen-jsonl/v1``) as a third-party LCM format and agent plugin."""

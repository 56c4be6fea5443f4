"""LCM's built-in Jinja prompt templates and the prompt source that serves them."""

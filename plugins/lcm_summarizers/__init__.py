"""Built-in summarizers: litellm (any provider), extractive (offline default) and truncate."""

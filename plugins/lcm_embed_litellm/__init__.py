"""Built-in plugin: the ``litellm`` text embedder (any embedding model litellm reaches: OpenAI, Ollama, ...)."""

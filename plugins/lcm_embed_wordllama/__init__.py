"""Built-in plugin: the local ``wordllama`` text embedder (weights shipped in its wheel, no download)."""

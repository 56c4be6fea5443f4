"""Context assembly: what the model sees before each turn."""

from .app_context import assemble_context
from .assemble import AssembledContext, assemble, select_items

__all__ = ["AssembledContext", "assemble", "assemble_context", "select_items"]

"""Context assembly: what the model sees before each turn."""

from .app_context import assemble_context
from .assemble import AssembledContext, assemble, select_pieces
from .select import Piece, Selection, select

__all__ = ["AssembledContext", "Piece", "Selection", "assemble", "assemble_context", "select", "select_pieces"]

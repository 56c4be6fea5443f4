"""What a summarizer plugin implements, and the helpers summarizers and prompt plugins share.

``TRUNCATION_MARKER`` is the text ``truncate_text`` puts between the head and tail it keeps; ``TEMPLATES``
names the prompt templates a ``PromptSource`` may provide.
"""

from ..summarize.contracts import Level, Summarizer, SummarizerFactory, SummaryRequest
from ..summarize.prompts import TEMPLATES, DirectorySource, PromptRenderer
from ..summarize.tokens import count_tokens, estimate_tokens, load_litellm
from ..summarize.truncation import TRUNCATION_MARKER, truncate_text

__all__ = [
    "TEMPLATES",
    "TRUNCATION_MARKER",
    "DirectorySource",
    "Level",
    "PromptRenderer",
    "Summarizer",
    "SummarizerFactory",
    "SummaryRequest",
    "count_tokens",
    "estimate_tokens",
    "load_litellm",
    "truncate_text",
]

"""LCM's own restored context as agents hand it back: how to recognise it, and a prompt without it.

Cheap to import (the hook reads prompts with it): no dependency but ``re``.
"""

from __future__ import annotations

import re

LCM_CONTEXT_HEADER = "# Restored context (LCM)"
"""The first line of the context LCM's SessionStart and UserPromptSubmit hooks hand the agent."""
_WRAPPED = re.compile(r"<([A-Za-z][\w-]*)>\s*" + re.escape(LCM_CONTEXT_HEADER) + r".*?</\1>\s*", re.DOTALL)


def is_lcm_context(text: str) -> bool:
    """True for LCM's own restored context, as an agent writes it back into its transcript."""
    return LCM_CONTEXT_HEADER in text[:200]


def without_lcm_context(text: str) -> str:
    """``text`` without the elements that wrap LCM's own context (an agent may hand SessionStart's context back
    inside the first prompt, e.g. as ``<hook_context>…</hook_context>``): recall reads what the user typed."""
    if LCM_CONTEXT_HEADER not in text:
        return text
    return _WRAPPED.sub("", text).strip()

"""What a user would call a memory in the real Claude Code sessions under ``../shared/testdata``, by hand.

Labelled by reading the sessions as their user (a TODO app built with Next.js, then CLAUDE.md kept up to
date), before looking at what promotion keeps: each item is a fact or command worth knowing in the next
session, with the words a memory must contain to count as stating it (lower-cased substrings, all of them).
Everything promotion keeps that states none of these is noise (the client's ``/init`` and ``/orchestrator``
templates, a sub-agent's instructions, exploration commands, narration).
"""

from __future__ import annotations

LABELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("create-next-app runs unattended when its prompts are answered by `yes \"\"`", ("create-next-app", "yes")),
    ("the TypeScript check is `npx tsc --noEmit --skipLibCheck`", ("tsc", "--noemit")),
    ("the dev server starts with `pnpm dev`", ("pnpm dev",)),
    ("icons come from lucide-react, added with pnpm", ("lucide-react",)),
    ("todo-app's model uses `title` and `TodoStatus`, not `text` and `TodoFilter`", ("title", "todostatus")),
    ("the stack is Next.js 15.5.2 with React 19 and Tailwind v4", ("15.5.2",)),
    ("components and types exist twice: at the root and inside todo-app", ("duplicat",)),
    ("there is no `npm run type-check` script", ("type-check",)),
)


def matches(text: str) -> list[str]:
    """The labels ``text`` states."""
    lowered = text.lower()
    return [label for label, words in LABELS if all(w in lowered for w in words)]


def precision_recall(texts: list[str]) -> tuple[float, float, int]:
    """(precision, recall, count) of a promoted set: share of texts stating a label, share of labels stated."""
    stated = [matches(t) for t in texts]
    found = {label for labels in stated for label in labels}
    precision = sum(1 for labels in stated if labels) / len(texts) if texts else 0.0
    return precision, len(found) / len(LABELS), len(texts)

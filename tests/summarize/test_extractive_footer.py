"""The extractive summary's last line names topics of what it left out, never the vocabulary of code."""

from __future__ import annotations

import json
import random

from lcm_summarizers.extractive import extract

CODE = ("export const addTodo = (todos: Todo[], title: string): Todo[] => [...todos, {title}];\n"
        "export function toggle(id: string): void { setTodos(update(id)); }\n"
        "import { useState } from 'react';\n")
WORDS = ("the", "a", "value", "then", "also", "more", "some", "other", "text", "about", "while", "when", "page")


def segment() -> str:
    """A session of prose, code written by tool calls, directory listings and file reads; two identifiers
    recur in the prose of passages a small summary leaves out."""
    rng = random.Random(11)
    lines = []
    for i in range(160):
        stamp = f"[2026-02-17 {8 + i // 60:02d}:{i % 60:02d}]"
        filler = " ".join(rng.choice(WORDS) for _ in range(16))
        if i % 4 == 0:
            call = {"file_path": f"/src/components/Item{i}.tsx", "content": CODE}
            lines.append(f"{stamp} assistant: tool call Write: {json.dumps(call)}")
        elif i % 4 == 1:
            lines.append(f"{stamp} tool: drwxr-xr-x  5 kaito staff 160 Sep  3 src\n" + CODE)
        elif i % 20 == 2:
            lines.append(f"{stamp} assistant: {filler} invoice_queue {filler} billing-worker-7 {filler}.")
        else:
            lines.append(f"{stamp} user: {filler}.")
    return "\n\n".join(lines)


def test_the_footer_names_recurring_identifiers_of_the_left_out_prose_and_no_code_tokens() -> None:
    footer = extract(segment(), 400).splitlines()[-1]
    assert footer.startswith("Expand for details"), footer
    topics = footer.partition(":")[2].partition("(")[0]
    for token in ("const", "string", "void", "export", "import", "file_path", "drwxr-xr-x", "kaito", "content"):
        assert token not in topics.split(", "), footer
    assert topics.strip().split(", ") == ["billing-worker-7", "invoice_queue"], footer
    assert "passages of" in footer and "lines not shown" in footer

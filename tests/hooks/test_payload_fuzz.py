"""Fuzzing the hook payload reader (bounded, seeded): whatever an agent writes on stdin, ``parse`` answers a
``HookInput`` whose forwarded payload and prompt encode as UTF-8, or ``PayloadError``: never another error."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lcm_framework.agent_hooks.payload import EXTRA_FIELDS, HookInput, PayloadError, parse

TEXT = st.text(st.characters(codec=None, categories=("L", "N", "P", "S", "Zs", "Cc", "Cs")), max_size=40)
KEYS = st.sampled_from(["session_id", "transcript_path", "cwd", "hook_event_name", "prompt", *EXTRA_FIELDS]) | TEXT
LEAVES = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10**100, max_value=10**400)
          | st.floats(allow_nan=True, allow_infinity=True) | TEXT)
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                      max_leaves=20)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=8)
FUZZ = settings(max_examples=100, derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def usable(hook: HookInput) -> None:
    json.dumps(hook.forward(Path("/p")), ensure_ascii=False).encode("utf-8")
    if hook.prompt is not None:
        hook.prompt.encode("utf-8")


def outcome(raw: bytes) -> None:
    try:
        hook = parse(raw, event="UserPromptSubmit", agent=None)
    except PayloadError:
        return
    usable(hook)


@FUZZ
@given(OBJECTS)
@example({"prompt": "\ud800", "session_id": "\udfff", "cwd": "/\ud83d"})
@example({"session_id": "s", "model": "\ud800", "turn_id": 10**4000})
def test_any_json_object_gives_an_event_that_encodes(data: dict[str, object]) -> None:
    outcome(json.dumps(data).encode())  # ensure_ascii: lone surrogates travel as \\udXXX escapes


@FUZZ
@given(VALUES)
def test_any_json_value_gives_an_event_or_payload_error(value: object) -> None:
    outcome(json.dumps(value).encode())


@FUZZ
@given(st.binary(max_size=200))
@example(b"[" * 100_000)
@example(b'{"a": ' * 100_000)
@example(b'{"session_id": 1' + b"0" * 5000 + b"}")
@example(b'{"session_id": "s", "prompt": "' + b"\xed\xa0\x80" + b'"}')  # a surrogate UTF-8-encoded: invalid
def test_any_bytes_give_an_event_or_payload_error(raw: bytes) -> None:
    outcome(raw)


def test_a_prompt_with_lone_surrogates_is_repaired_with_a_note() -> None:
    hook = parse(b'{"session_id": "s", "prompt": "deploy \\ud800 now \\ud83d\\ude00"}', event="UserPromptSubmit",
                 agent=None)
    assert hook.prompt == "deploy \ufffd now \U0001f600" and len(hook.notes) == 1


def test_lcm_context_an_agent_glued_to_the_prompt_is_not_recalled_on() -> None:
    restored = ("<hook_context># Restored context (LCM): the previous session\n<summary id=\"sum_1\">the deploy "
                "pipeline, kubectl, staging</summary>\n</hook_context>\n\n")
    typed = "how do we deploy this service to production?"
    glued = parse(json.dumps({"session_id": "s", "prompt": restored + typed}).encode(), event="UserPromptSubmit",
                  agent=None)
    assert glued.prompt == typed
    only = parse(json.dumps({"session_id": "s", "prompt": restored}).encode(), event="UserPromptSubmit", agent=None)
    assert only.prompt is None
    kept = parse(json.dumps({"session_id": "s", "prompt": typed + " <note>x</note>"}).encode(),
                 event="UserPromptSubmit", agent=None)
    assert kept.prompt == typed + " <note>x</note>"  # other markup is the user's

"""Every kind of secret the built-in pack covers is redacted in text, nested values and keys."""

from __future__ import annotations

import json

import pytest

from lcm_framework.scrub import Scrubber, ScrubRejected
from lcm_framework.transcripts.reader import Reason, parse_record

from .corpus import CASES, corpus

CORPUS = corpus(seed=7) + corpus(seed=1234)


def test_corpus_covers_every_builtin_rule(builtin_scrubber: Scrubber) -> None:
    builtin = {r.id for r in builtin_scrubber.rules if r.pack == "builtin"}
    assert builtin == set(CASES)


def test_secret_in_text_is_redacted_by_its_rule(builtin_scrubber: Scrubber) -> None:
    for rule_id, text, secret in CORPUS:
        assert rule_id in {f.rule_id for f in builtin_scrubber.findings(text)}, rule_id
        scrubbed, counts = builtin_scrubber.scrub_text(text)
        assert secret not in scrubbed, rule_id
        assert "[REDACTED:" in scrubbed and counts, rule_id
        assert builtin_scrubber.scrub_text(scrubbed) == (scrubbed, {}), rule_id  # idempotent


def test_every_rule_holds_across_many_random_secrets(builtin_scrubber: Scrubber) -> None:
    """Random bodies end in '-', '_' or a digit sometimes: boundaries must not let one through."""
    for seed in range(100, 160):
        for rule_id, text, secret in corpus(seed):
            scrubbed, _ = builtin_scrubber.scrub_text(f"{text}\n")
            assert secret not in scrubbed, (rule_id, seed)


def _tool_record(text: str, secret: str) -> dict:
    return {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"I will use it: {text}"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                 "input": {"command": f"deploy --cfg '{text}'", "env": {"X": [text, {"deep": text}]}}},
            ],
        },
        "toolUseResult": {"stdout": f"line1\n{text}\nline3", "stderr": ""},
    }


def test_secret_in_nested_values_and_tool_io_never_survives(builtin_scrubber: Scrubber) -> None:
    for rule_id, text, secret in CORPUS:
        out = builtin_scrubber.scrub_record(_tool_record(text, secret))
        assert secret not in out.canonical_json, rule_id
        assert secret not in json.dumps(out.value, ensure_ascii=False), rule_id
        assert sum(out.redactions.values()) >= 5, rule_id
        # the reader's view of the stored JSON is the same record
        assert parse_record(out.canonical_json.encode()) == out.value, rule_id


def test_secret_in_a_json_key_is_redacted(builtin_scrubber: Scrubber) -> None:
    for rule_id, text, secret in CORPUS:
        record = {"type": "user", "message": {"role": "user", "content": {text: 1, "other": 2}}}
        out = builtin_scrubber.scrub_record(record)
        assert secret not in out.canonical_json, rule_id
        [key] = [k for k in out.value["message"]["content"] if k != "other"]  # type: ignore[call-overload,index]
        assert "[REDACTED:" in key, rule_id


def test_record_of_the_whole_corpus_as_json_text(builtin_scrubber: Scrubber) -> None:
    """A tool output that is itself JSON (escaped newlines and quotes) holding every secret."""
    blob = json.dumps({rule: text for rule, text, _ in CORPUS})
    out = builtin_scrubber.scrub_record([{"type": "tool_result", "content": blob}])
    for _, _, secret in CORPUS:
        assert secret not in out.canonical_json


def test_two_keys_equal_after_redaction_are_a_collision(builtin_scrubber: Scrubber) -> None:
    [(_, a, _), (_, b, _)] = [c for c in CORPUS if c[0] == "github-pat"]
    with pytest.raises(ScrubRejected) as info:
        builtin_scrubber.scrub_record({"x": {a.split()[-1]: 1, b.split()[-1]: 2}})
    assert info.value.reason is Reason.REDACTED_KEY_COLLISION


def test_redacted_key_colliding_with_an_existing_marker_key(builtin_scrubber: Scrubber) -> None:
    [(_, _text, secret)] = [c for c in corpus(3) if c[0] == "github-pat"]
    with pytest.raises(ScrubRejected) as info:
        builtin_scrubber.scrub_record({secret: 1, "[REDACTED:github-pat]": 2})
    assert info.value.reason is Reason.REDACTED_KEY_COLLISION
    assert secret not in str(info.value)


def test_structured_signature_is_a_residual_secret(builtin_scrubber: Scrubber) -> None:
    """Neither string matches alone; the canonical JSON ``"password":"..."`` does."""
    [(_, _, password)] = [c for c in corpus(5) if c[0] == "generic-credential-assignment"]
    assert builtin_scrubber.scrub_text("password") == ("password", {})
    assert builtin_scrubber.scrub_text(password)[1] == {}
    with pytest.raises(ScrubRejected) as info:
        builtin_scrubber.scrub_record({"type": "user", "config": {"password": password}})
    assert info.value.reason is Reason.RESIDUAL_SECRET
    assert password not in str(info.value)


def test_clean_record_is_returned_as_is_with_digest(builtin_scrubber: Scrubber) -> None:
    import hashlib

    record = {"b": [1, 2.5, None, True], "a": "plain text about tokens and keys"}
    out = builtin_scrubber.scrub_record(record)
    assert out.value is record
    assert out.canonical_json == '{"a":"plain text about tokens and keys","b":[1,2.5,null,true]}'
    assert out.sha256 == hashlib.sha256(out.canonical_json.encode()).hexdigest()
    assert out.redactions == {}
    # key order does not change the digest
    assert builtin_scrubber.scrub_record(dict(reversed(record.items()))).sha256 == out.sha256


def test_placeholders_are_not_redacted(builtin_scrubber: Scrubber) -> None:
    for text in [
        "password = os.environ['DB_PASSWORD']",
        "DATABASE_URL=postgres://user:password@localhost/db",
        "api_key = ${OPENAI_API_KEY}",
        "postgresql://***@db.example.com/***",
        "the number of input_tokens: 123456789",
        "secret_name: my-app-secret-name",
        "password = hashlib.sha256(salt + raw)",
        "api_key=derive_key2(seed)",
    ]:
        assert builtin_scrubber.scrub_text(text) == (text, {}), text


def test_findings_give_positions_never_the_secret(builtin_scrubber: Scrubber) -> None:
    [(_, _, secret)] = [c for c in corpus(21) if c[0] == "github-pat"]
    text = f"first line\nsecond é line {secret} tail\n"
    [finding] = builtin_scrubber.findings(text)
    assert finding.rule_id == "github-pat"
    assert text[finding.start : finding.end] == secret
    assert (finding.line, finding.column) == (2, len("second é line ") + 1)
    assert secret not in repr(finding)

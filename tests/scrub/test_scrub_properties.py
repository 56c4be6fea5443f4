"""Property tests: a corpus secret placed anywhere in any JSON record never survives scrubbing."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_framework.scrub import Scrubber, ScrubRejected
from lcm_framework.transcripts.reader import Reason

from .corpus import corpus

CASES = corpus(seed=2024)
text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20)
leaf = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), text)
records = st.recursive(
    st.dictionaries(text, leaf, max_size=4),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=12,
)


def _place(record: Any, secret_text: str, path: list[int], as_key: bool) -> Any:
    """Put ``secret_text`` as a new key or string value somewhere along ``path``."""
    node = record
    for step in path:
        children = list(node.values()) if isinstance(node, dict) else node
        containers = [c for c in children if isinstance(c, dict | list)]
        if not containers:
            break
        node = containers[step % len(containers)]
    if isinstance(node, list):
        node.append(secret_text)
    elif as_key:
        node[secret_text] = "value"
    else:
        node["placed"] = f"see {secret_text} here"
    return record


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(records, st.sampled_from(CASES), st.lists(st.integers(0, 5), max_size=4), st.booleans())
def test_placed_secret_never_survives(builtin_scrubber: Scrubber, record: Any, case: tuple[str, str, str],
                                      path: list[int], as_key: bool) -> None:
    _rule, secret_text, secret = case
    placed = _place(record, secret_text, path, as_key)
    try:
        out = builtin_scrubber.scrub_record(placed)
    except ScrubRejected as exc:
        assert exc.reason in (Reason.REDACTED_KEY_COLLISION, Reason.RESIDUAL_SECRET)
        assert secret not in str(exc)
        return
    assert secret not in out.canonical_json
    assert builtin_scrubber.scrub_record(out.value).canonical_json == out.canonical_json  # stable

"""Keep provider credentials out of every message we raise or show."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_SECRET_NAME = re.compile(r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|ACCESS_KEY|CREDENTIALS?)$", re.IGNORECASE)
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|gsk_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}"
    r"|xai-[A-Za-z0-9]{20,})"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|(?P<pre>(?i:(?:api[_-]?key|x-api-key)[\"']?\s*[:=]\s*[\"']?))[^\s\"',}]{6,}"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"
)
MASK = "***"


def secret_values(env: Mapping[str, str], extra: Iterable[str | None] = ()) -> list[str]:
    """Values of environment variables whose names say they hold credentials (plus ``extra``)."""
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 6}
    values.update(v for v in extra if v and len(v) >= 6)
    return sorted(values, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every known secret value and every credential-shaped string masked."""
    for value in secrets:
        if value in text:
            text = text.replace(value, MASK)
    return _KEY_SHAPES.sub(lambda m: (m.group("pre") or "") + MASK, text)

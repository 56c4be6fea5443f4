"""The daemon proves it holds this ``LCM_HOME``'s token before a client sends it anything (cheap to import).

The client sends a fresh random challenge to the open ``/health`` route; the
daemon answers ``HMAC-SHA256(token, "lcm-daemon-v1|<port>|<challenge>")``
with ``<port>`` the local port the connection reached. Only then, on the same
connection, does the client send its bearer token and payload. A process that
took the port without the token cannot answer; one relaying the challenge to
the real daemon on another port gets a proof bound to that other port, which
the client refuses.
"""

from __future__ import annotations

import hmac
import os
import re

CHALLENGE_BYTES = 16
CHALLENGE = re.compile(r"[0-9a-f]{32,128}")
_CONTEXT = "lcm-daemon-v1"


def new_challenge() -> str:
    return os.urandom(CHALLENGE_BYTES).hex()


def proof(token: str, port: int, challenge: str) -> str:
    """What the daemon listening on ``port`` answers to ``challenge``."""
    message = f"{_CONTEXT}|{port}|{challenge}".encode("ascii")
    return hmac.new(token.encode("utf-8"), message, "sha256").hexdigest()


def verify(token: str, port: int, challenge: str, answer: object) -> bool:
    """Whether ``answer`` is the proof of the daemon of ``token`` on ``port`` (constant-time compare)."""
    return isinstance(answer, str) and hmac.compare_digest(answer.encode("ascii", "replace"),
                                                           proof(token, port, challenge).encode("ascii"))

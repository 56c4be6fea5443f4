"""Crash injection for the drain worker's tests: SIGKILL the process right after a durable checkpoint.

``LCM_TEST_SYNC_KILL_AT=<checkpoint>[:<n>]`` kills the worker the ``n``-th time (default 1) it passes that
checkpoint. Nothing else reads it; unset, ``reached`` does nothing.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

ENV = "LCM_TEST_SYNC_KILL_AT"
CHECKPOINTS = ("local_claimed", "remote_inserted", "local_delivered", "remote_claimed", "remote_applied",
               "local_acknowledged", "remote_pruned", "local_remote_pruned")


class KillPoints:
    def __init__(self, env: Mapping[str, str]) -> None:
        spec = env.get(ENV, "")
        name, _, count = spec.partition(":")
        self._target = name if name in CHECKPOINTS else None
        self._remaining = int(count) if count.isdigit() and int(count) > 0 else 1

    def reached(self, checkpoint: str) -> None:
        if checkpoint != self._target:
            return
        self._remaining -= 1
        if self._remaining == 0:
            os.kill(os.getpid(), signal.SIGKILL)

"""Helper processes with a pickle pipe each way: import workers (``ingest.parallel``) and the embedder of an
import (``recall.lane_feed``).

A child is ``python -P -m MODULE IN_FD OUT_FD``, a plain subprocess, not ``multiprocessing`` (that would re-run
the caller's main script in the child). It asks Linux to kill it when its parent dies (``die_with_parent``),
so ``kill -9`` of an import leaves no orphan behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


class Child:
    """One helper process: ``send`` to it, ``inbox.recv()`` from it, ``close`` to end it."""

    def __init__(self, module: str) -> None:
        from multiprocessing.connection import Connection  # 8 ms: only where a child starts

        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-m", module, str(to_child_r), str(from_child_w)],
                pass_fds=(to_child_r, from_child_w), env=env, stdin=subprocess.DEVNULL)
        except BaseException:
            for fd in (to_child_w, from_child_r):
                os.close(fd)
            raise
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.inbox = Connection(from_child_r, writable=False)
        self.outbox = Connection(to_child_w, readable=False)

    def send(self, message: object) -> bool:
        """False when the child is gone (its pipe reports the end next)."""
        try:
            self.outbox.send(message)
            return True
        except OSError:
            return False

    def close(self, *, kill: bool = False) -> None:
        """Ask the child to stop (``None``) and wait for it; ``kill`` ends it at once."""
        if kill:
            self.proc.kill()
        else:
            self.send(None)
        self.outbox.close()
        self.proc.wait()
        self.inbox.close()


def die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this process when ``parent_pid`` dies (elsewhere a closed pipe ends it)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def serve_child(argv: list[str], serve: Callable[[Connection, Connection], None]) -> None:
    """A child's ``main``: ``serve(inbox, outbox)`` on the pipes its parent passed; Ctrl-C is the parent's to
    handle, and a parent gone away ends it quietly."""
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        serve(Connection(int(argv[0]), writable=False), Connection(int(argv[1]), readable=False))
    except (EOFError, BrokenPipeError):
        pass

"""The embedder of an import in a process of its own (``python -m lcm_framework.recall.embed_child IN_FD OUT_FD``),
started by ``lane_feed``.

It reads a ``lane_feed.EmbedSetup``, rebuilds the project's configuration and loads the lane's embedder
(``semantic.lane``), answers ``("ready", VectorSpace)`` or ``("unavailable", reason)``, then for each list of
texts it reads answers ``("vectors", [bytes, ...])``, their quantized vectors (``semantic.embed_texts``), until
``None``; an embedder that fails answers ``("failed", reason)`` and the child ends.
"""

from __future__ import annotations

import io
import sys
from multiprocessing.connection import Connection

from ..child_process import die_with_parent, serve_child
from .lane_feed import EmbedSetup


def serve(inbox: Connection, outbox: Connection) -> None:
    from ..config import load_config
    from ..errors import LcmError
    from ..kernel.plugins import build_plugins
    from .semantic import embed_texts, lane, space

    setup = inbox.recv()
    assert isinstance(setup, EmbedSetup)
    die_with_parent(setup.parent_pid)
    plugins = build_plugins(setup.env, stderr=io.StringIO())  # the parent already reported plugin problems
    try:
        embedder = lane(load_config(project=setup.project_root, env=setup.env, overrides=setup.flags,
                                    plugins=plugins), plugins)
    except LcmError as exc:
        outbox.send(("unavailable", str(exc)))
        return
    if embedder is None:
        outbox.send(("unavailable", "the semantic lane is off or cannot run here"))
        return
    outbox.send(("ready", space(embedder)))
    while (texts := inbox.recv()) is not None:
        try:
            vectors = embed_texts(embedder, texts)
        except Exception as exc:  # reported to the parent, which embeds the rest after the import
            outbox.send(("failed", f"the embedder failed ({type(exc).__name__})"))
            return
        outbox.send(("vectors", vectors))


def main(argv: list[str]) -> None:
    serve_child(argv, serve)


if __name__ == "__main__":
    main(sys.argv[1:])

"""An import worker process (``python -m lcm_framework.ingest.worker IN_FD OUT_FD``), started by ``parallel``.

It reads a ``WorkerSetup`` and then ``(index, SourceSpec)`` tasks from ``IN_FD``
until ``None``, imports each file with its own App, and writes
``("progress", ProgressEvent)`` and ``("done", index, FileReport)`` to ``OUT_FD``.
"""

from __future__ import annotations

import io
import sys
from dataclasses import replace
from multiprocessing.connection import Connection

from ..child_process import die_with_parent, serve_child
from .context import RunContext
from .discovery import select_formats
from .engine import import_spec
from .parallel import WorkerSetup
from .report import ProgressEvent


def serve(inbox: Connection, outbox: Connection) -> None:
    """Rebuild the parent's App from its setup, then import each file sent until ``None``."""
    from ..app import App
    from ..config import load_config
    from ..kernel.plugins import build_plugins

    setup = inbox.recv()
    assert isinstance(setup, WorkerSetup)
    die_with_parent(setup.parent_pid)
    env = setup.env
    plugins = build_plugins(env, stderr=io.StringIO())  # the parent already reported plugin problems
    app = App(load_config(project=setup.project_root, env=env, overrides=setup.flags, plugins=plugins), plugins)

    def forward(event: ProgressEvent) -> None:
        outbox.send(("progress", event))

    options = replace(setup.options, progress=forward if setup.forward_progress else None)
    ctx = RunContext(app, options, select_formats(app.plugins.formats(), setup.provider))
    try:
        while (task := inbox.recv()) is not None:
            index, spec = task
            outbox.send(("done", index, import_spec(ctx, spec, explicit=spec.named)))
    finally:
        ctx.close()
        app.close()


def main(argv: list[str]) -> None:
    serve_child(argv, serve)


if __name__ == "__main__":
    main(sys.argv[1:])

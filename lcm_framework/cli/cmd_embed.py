"""``lcm embed [--all-projects] [--json]``: give every stored message and summary its semantic-lane vector."""

from __future__ import annotations

import argparse
import sys

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json
from .recall_common import add_all_projects, add_json, project_names


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..embedding import EmbeddingUnavailableError
    from ..recall import project_scopes
    from ..recall.semantic import fill, lane
    from ..storage.models import SearchTarget

    if str(app.config.get("recall.semantic")) == "off":
        print("the semantic lane is off (recall.semantic=off): nothing to embed; "
              "lcm config set recall.semantic on", file=sys.stderr)
        return 1
    embedder = lane(app.config, app.plugins)
    if embedder is None:
        raise EmbeddingUnavailableError(f"the embedder {app.config.get('recall.embedder')!r} cannot run here; "
                                        "pip install 'lcm-framework[semantic]' (or set recall.embedder)")
    rows = []
    with project_scopes(app, args.all_projects) as scopes:
        for storage in scopes:
            name = project_names(app, [storage.project_id])[storage.project_id]
            counts = storage.vectors.counts()
            todo = sum(c.stored - c.embedded for c in counts.values())
            done = 0

            def shown(target: SearchTarget, count: int, name: str = name, todo: int = todo) -> None:
                nonlocal done
                done += count
                if not args.json:
                    print(f"\r  {name}: {done:,} of {todo:,} embedded", end="", file=sys.stderr, flush=True)

            filled = fill(storage, embedder, everything=True, progress=shown)
            if done and not args.json:
                print(file=sys.stderr)
            after = storage.vectors.counts()
            rows.append({"project_id": storage.project_id, "embedder": embedder.name,
                         "dimensions": embedder.dimensions, "messages": filled.messages,
                         "summaries": filled.summaries, "dropped": filled.dropped,
                         "messages_embedded": after[SearchTarget.MESSAGES].embedded,
                         "summaries_embedded": after[SearchTarget.SUMMARIES].embedded})
            if not args.json:
                print(f"{name}: {filled.messages:,} message(s) and {filled.summaries:,} summary(ies) embedded "
                      f"with {embedder.name} ({embedder.dimensions} dimensions)"
                      + ("; the vectors of the previous embedder were dropped" if filled.dropped else "")
                      + f"; {after[SearchTarget.MESSAGES].embedded:,} of {after[SearchTarget.MESSAGES].stored:,} "
                      f"messages have one")
    if args.json:
        print_json({"projects": rows})
    return 0


COMMAND = CommandSpec(
    name="embed",
    help="embed every stored message and summary for the semantic recall lane (resumable)",
    description=(
        "Gives every message and summary without one its vector for the semantic recall lane\n"
        "(recall.semantic, recall.embedder; docs/recall.md), in batches, with progress on stderr.\n"
        "Imports and hooks embed what they store; this backfills what was stored before the lane was on,\n"
        "or with another embedder (whose vectors are dropped first). Interrupted, it resumes where it\n"
        "stopped; run again, it embeds only what is new."
    ),
    configure=configure,
    run=run,
)

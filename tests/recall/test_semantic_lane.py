"""The semantic recall lane with the local wordllama embedder: filled at import, backfilled by ``lcm embed``,
fused into ``lcm search`` and prompt-time recall, off when ``recall.semantic`` says so."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.memory.hints import for_prompt
from lcm_framework.memory.scope import MemoryScope
from lcm_framework.recall.across import search_all
from lcm_framework.recall.search import search
from lcm_framework.recall.semantic import fill, lane
from lcm_framework.storage.models import NewMemory, SearchTarget
from tests.conftest import run_lcm, skip_or_fail
from tests.ingest.support import make_app, write_jsonl

DEPLOY = "Deploys go through the blue-green script scripts/bg_deploy.sh, never kubectl apply by hand"
# the answer shares no word with the question: only the meaning matches
TURNS = [("user", "how do you spend your free time these days?"),
         ("assistant", "Football with friends on Saturdays, tennis on Sundays."),
         ("user", "and the printer on the second floor?"),
         ("assistant", "The toner cartridge was replaced yesterday, it prints fine again.")]
QUESTION = "which sport is played on weekends?"


@pytest.fixture(autouse=True)
def _wordllama() -> None:
    try:
        import numpy  # noqa: F401
        import wordllama  # noqa: F401
    except ImportError:
        skip_or_fail("the semantic lane's tests need the semantic extra: pip install -e '.[test,semantic]'")


def session(path: Path, cwd: Path, turns: Sequence[tuple[str, str]] = TURNS) -> Path:
    records: list[dict[str, Any]] = []
    parent = None
    for n, (role, text) in enumerate(turns):
        uid = f"00000000-0000-0000-0000-{n + 1:012d}"
        message: dict[str, Any] = {"role": role, "content": text} if role == "user" else {
            "role": role, "id": f"msg_{n}", "type": "message", "model": "claude-sonnet-4",
            "content": [{"type": "text", "text": text}]}
        records.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(cwd),
                        "sessionId": "5e5a0000-0000-0000-0000-000000000001", "version": "2.0.28", "type": role,
                        "uuid": uid, "timestamp": f"2025-03-{n % 28 + 1:02d}T10:00:00.000Z", "message": message})
        parent = uid
    return write_jsonl(path, records)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def cli(root: Path, *args: str, semantic: str = "auto") -> tuple[int, str, str]:
    home = root.parent / "home"
    done = run_lcm("--project", str(root), *args, cwd=root,
                   env={"LCM_HOME": str(home / ".lcm"), "HOME": str(home), "LCM_RECALL_SEMANTIC": semantic})
    return done.returncode, done.stdout, done.stderr


def test_an_import_embeds_what_it_stores_and_search_finds_an_answer_by_meaning(tmp_path: Path) -> None:
    root = project(tmp_path)
    source = session(tmp_path / "s.jsonl", root)
    app = make_app(root)
    try:
        from lcm_framework.ingest.api import import_sources

        import_sources(app, [source], project=root)
        with app.project() as storage:
            counts = storage.vectors.counts()[SearchTarget.MESSAGES]
            assert (counts.embedded, counts.stored) == (4, 4)
        found = search_all(app, QUESTION, limit=3, context=0)
        assert found and "Football" in found[0].hit.snippet
    finally:
        app.close()
    off = make_app(root, **{"recall.semantic": "off"})
    try:
        assert not any("Football" in r.hit.snippet for r in search_all(off, QUESTION, limit=3, context=0))
    finally:
        off.close()


def test_lcm_embed_backfills_what_was_stored_with_the_lane_off_and_resumes_idempotently(tmp_path: Path) -> None:
    root = project(tmp_path)
    source = session(tmp_path / "s.jsonl", root)
    code, _, err = cli(root, "import", str(source), "--project", str(root), semantic="off")
    assert code == 0, err
    code, out, err = cli(root, "search", QUESTION, "--json")
    assert "Football" not in out  # nothing embedded yet: lexical only
    code, out, err = cli(root, "embed", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["projects"]
    assert (row["messages"], row["messages_embedded"], row["embedder"], row["dimensions"]) == (4, 4, "wordllama", 256)
    code, out, err = cli(root, "embed")
    assert code == 0 and "0 message(s)" in out and "4 of 4 messages" in out, out + err
    code, out, err = cli(root, "search", QUESTION, "--json", "--limit", "3")
    assert code == 0 and "Football" in json.loads(out)["results"][0]["snippet"], out + err
    code, out, err = cli(root, "embed", semantic="off")
    assert code == 1 and "recall.semantic=off" in err and "Traceback" not in err


def test_prompt_recall_surfaces_a_memory_by_meaning_and_nothing_for_an_unrelated_prompt(tmp_path: Path) -> None:
    root = project(tmp_path)
    app = make_app(root)
    try:
        embedder = lane(app.config, app.plugins)
        assert embedder is not None
        with app.project() as storage:
            storage.promoted_memory.create_memory(NewMemory(DEPLOY, ("deploy",), 0.8))

            def surfaced(prompt: str, scope: MemoryScope) -> list[object]:
                return for_prompt(scope, None, prompt, session_id=None, min_score=0.3, max_tokens=400)["items"]

            lexical, semantic = MemoryScope(storage, False), MemoryScope(storage, False, embedder=embedder)
            paraphrase = "how do we deploy this service to production?"
            assert surfaced(paraphrase, lexical) == []  # one shared stem: relevance 0.26, under 0.3
            assert [i["kind"] for i in surfaced(paraphrase, semantic)] == ["memory"]  # type: ignore[index]
            assert surfaced("what is the capital of Peru", semantic) == []
            assert surfaced("run the blue-green deploy script", lexical)
    finally:
        app.close()


def test_another_embedder_replaces_the_vectors(tmp_path: Path) -> None:
    root = project(tmp_path)
    source = session(tmp_path / "s.jsonl", root)
    app = make_app(root)
    try:
        from lcm_framework.ingest.api import import_sources

        import_sources(app, [source], project=root)
        embedder = lane(app.config, app.plugins)
        assert embedder is not None

        class Renamed:
            name, dimensions, local = "wordllama-renamed", embedder.dimensions, True

            def embed(self, texts: Any) -> Any:
                return embedder.embed(texts)

        with app.project() as storage:
            again = fill(storage, Renamed())
            assert again.dropped and again.messages == 4
            assert storage.vectors.space() is not None and storage.vectors.space().embedder == "wordllama-renamed"  # type: ignore[union-attr]
            assert fill(storage, Renamed()).messages == 0
            # the query's embedder is not the one the vectors come from: the lane stays out until they are replaced
            assert not any("Football" in r.hit.snippet for r in search(storage, QUESTION, embedder=embedder))
            assert fill(storage, embedder).dropped
            assert "Football" in search(storage, QUESTION, embedder=embedder, context=0)[0].hit.snippet
    finally:
        app.close()


@pytest.mark.postgres
def test_on_postgresql_an_import_embeds_and_search_finds_by_meaning(tmp_path: Path) -> None:
    from lcm_framework.app import App
    from lcm_framework.ingest.api import import_sources
    from lcm_framework.kernel.plugins import build_plugins
    from tests.postgres.support import require_database

    db = require_database()
    root = project(tmp_path)
    source = session(tmp_path / "s.jsonl", root)
    with db.fresh_schema() as schema:
        config = db.config(schema, tmp_path / "pg")
        app = App(config, build_plugins(config.env))
        try:
            import_sources(app, [source], project=root)
            with app.project(root) as storage:
                counts = storage.vectors.counts()[SearchTarget.MESSAGES]
                assert (counts.embedded, counts.stored) == (4, 4)
                found = search(storage, QUESTION, limit=3, context=0, embedder=lane(app.config, app.plugins))
                assert found and "Football" in found[0].hit.snippet
        finally:
            app.close()

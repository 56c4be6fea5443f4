"""Conversational recall: does ``lcm_search``'s result list hold the evidence, against plain BM25?

Generated two-person conversations over many sessions (``recall_dialogues``:
facts stated once and asked in paraphrase, updated later, spread over two
sessions, and "when" questions answered by the message date) and, when the
shared test data is present, the real Claude Code sessions under
``../shared/testdata/transcripts/claude-code`` with hand-written questions.
Each conversation is written as Claude Code transcripts, imported through
``import_sources`` (what ``lcm import`` runs), compacted in full with the
offline extractive summarizer, and every question is asked through the
``lcm_search`` capability (what the MCP tool and ``lcm search --json`` run).

A result holds an evidence turn when it shows that message (the hit itself, a
neighbouring turn it carries, a summary's turn) or quotes the statement that
answers whole (a summary's text; the turn around it may say more). recall@k: the
share of a question's evidence turns the first k results hold, averaged per
question kind, for

* ``list``: LCM's result list (the tool's JSON),
* ``messages``: the backend's ranked message hits alone (``RANKED`` over messages),
* ``bm25``: plain Okapi BM25 (k1 1.2, b 0.75, lower-cased words, no stemming,
  no stop list) over the same stored turns, implemented here,

and the characters each returns per question (compact JSON: ids, speakers,
dates and text included; BM25's turns whole). Targets (issue 27): list
recall@5 >= 1.3x BM25 overall and >= BM25 for every kind, at <= 2x BM25's
characters.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.recall_dialogues import build_dialogue, write_sessions

KS = (5, 10)
WORD = re.compile(r"\w+")
REAL = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "transcripts" / "claude-code"
REAL_SESSIONS = ("fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
                 "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
# (question, evidence: one text per evidence turn; a message containing it is that turn)
REAL_QUESTIONS = [
    ("why did the project generator keep stopping?", ["The command is waiting for input about the"]),
    ("which icon package was added to the app?", ["pnpm add lucide-react"]),
    ("what error came back when editing the page before opening it?", ["File has not been read yet"]),
    ("which versions of Next.js and React does the package use?", ["Next.js: 15.5.2 (upgraded from"]),
    ("why did the sub-agent call for analyzing the project structure fail?",
     ["The required parameter `prompt` is missing"]),
    ("where did the type definition files actually end up?", ["The files are actually in `/path/to/Demo/todo-app"]),
    ("which port did the first dev server check use?", ["pnpm dev --port 3001"]),
    ("did the production build work?", ["There seems to be a build issue"]),
    ("what naming mismatch was found between the types and the components?",
     ["uses a simpler structure with `title` instead of `text`"]),
    ("why could CLAUDE.md not be written in the empty repository?", ["you haven't granted it yet"]),
    ("how were the type files written after the write tool kept failing?",
     ["creating the files without the write tool"]),
]


# Prompts about nothing these conversations hold: prompt-time recall should surface nothing for them.
UNRELATED = [
    "what is the capital of Peru", "how many moons does Jupiter have?", "translate 'good morning' into Finnish",
    "explain the difference between TCP and UDP", "write a haiku about autumn leaves",
    "what year did the Berlin wall fall?", "how do I reverse a linked list in C?",
    "convert 72 fahrenheit to celsius", "who painted the Mona Lisa?", "what does HTTP status 418 mean?",
    "give me a regex for an IPv4 address", "summarize the plot of Hamlet", "what is the boiling point of ethanol?",
    "how do vaccines train the immune system?", "list the planets in order from the sun",
    "what is a monad in Haskell?", "how tall is Mount Kilimanjaro?", "recommend a sorting algorithm for nearly "
    "sorted data", "what causes the northern lights?", "how do I centre a div with CSS grid?",
]
THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
PROMPT_ITEMS = 6  # hints.MAX_ITEMS: what one prompt can surface


@dataclass
class Case:
    kind: str
    question: str
    evidence: list[set[int]]  # per evidence turn, the message ids that are it
    facts: list[str] = field(default_factory=list)  # per evidence turn, the statement that answers


@dataclass
class Project:
    root: Path
    turns: dict[int, tuple[str, str, str]] = field(default_factory=dict)  # id -> (role, created_at, content)
    cases: list[Case] = field(default_factory=list)


class BM25:
    """Okapi BM25 over ``docs`` (id -> text), from scratch: lower-cased ``\\w+`` words, no stemming."""

    def __init__(self, docs: dict[int, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = {d: Counter(WORD.findall(text.lower())) for d, text in docs.items()}
        self.length = {d: sum(c.values()) for d, c in self.tf.items()}
        self.avg = sum(self.length.values()) / max(1, len(self.length))
        df: Counter[str] = Counter()
        for counts in self.tf.values():
            df.update(counts.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def rank(self, query: str) -> list[int]:
        words = WORD.findall(query.lower())
        scores = {}
        for d, counts in self.tf.items():
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.length[d] / self.avg)
            for w in words:
                f = counts.get(w, 0)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores[d] = s
        return sorted(scores, key=lambda d: (-scores[d], -d))


def _app(root: Path, semantic: str = "auto") -> Any:
    from lcm_framework.app import App
    from lcm_framework.config import load_config
    from lcm_framework.kernel.plugins import build_plugins

    return App(load_config(project=root, overrides={"summarizer.provider": "extractive",
                                                    "recall.semantic": semantic},
                           plugins=build_plugins()), build_plugins())


def _load(root: Path, sources: Sequence[Path]) -> Project:
    """Import ``sources`` into the project at ``root`` and compact every conversation in full."""
    from lcm_framework.compaction import CompactionEngine, Mode
    from lcm_framework.ingest.api import import_sources
    from lcm_framework.recall.semantic import fill_lane

    app = _app(root)
    try:
        import_sources(app, list(sources), project=root)
        engine = CompactionEngine(app)
        project = Project(root)
        with app.project() as storage:
            for conversation in storage.conversations.list_conversations():
                engine.compact(storage, conversation.conversation_id, Mode.FULL)
                for m in storage.conversations.list_messages(conversation.conversation_id):
                    project.turns[m.message_id] = (m.role.value, m.created_at.isoformat(), m.content)
            fill_lane(storage, app.config, app.plugins)  # the summaries compaction just wrote
    finally:
        app.close()
    return project


def _ids_holding(project: Project, text: str) -> set[int]:
    return {mid for mid, (_, _, content) in project.turns.items() if text in content}


def dialogue_projects(tmp: Path, quick: bool) -> list[Project]:
    count, sessions = (2, 6) if quick else (8, 10)
    counts = {"single": 6, "update": 3, "multi": 3, "when": 4} if quick else \
        {"single": 12, "update": 6, "multi": 5, "when": 8}
    projects = []
    for n in range(count):
        rng = random.Random(1000 + n)
        dialogue = build_dialogue(rng, sessions, counts)
        root = tmp / f"dialogue-{n}"
        (root / ".git").mkdir(parents=True)
        evidence = write_sessions(dialogue, tmp / "sources" / f"dialogue-{n}", str(root), rng)
        project = _load(root, [tmp / "sources" / f"dialogue-{n}"])
        for q in dialogue.questions:
            project.cases.append(Case(q.kind, q.text, [_ids_holding(project, evidence[k]) for k in q.evidence],
                                      [evidence[k] for k in q.evidence]))
        projects.append(project)
    return projects


def real_project(tmp: Path) -> Project | None:
    files = [REAL / name for name in REAL_SESSIONS]
    if not all(f.exists() for f in files):
        return None
    root = tmp / "real"
    (root / ".git").mkdir(parents=True)
    project = _load(root, files)
    for question, evidence in REAL_QUESTIONS:
        slots = [_ids_holding(project, text) for text in evidence]
        if all(slots):
            project.cases.append(Case("coding", question, slots, list(evidence)))
    return project


def _message_id(ref: object) -> int | None:
    return int(ref[4:]) if isinstance(ref, str) and ref.startswith("msg_") and ref[4:].isdigit() else None


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def held(result: dict[str, Any], case: Case) -> set[int]:
    """The evidence turns (their index in ``case.evidence``) a result holds: it shows one of the turn's
    messages (the hit itself, a neighbouring turn it carries, a summary's turn), or quotes the statement
    that answers whole (a summary's text)."""
    shown = {_message_id(result.get("id"))}
    for key in ("context", "hits"):
        shown.update(_message_id(item.get("id")) for item in result.get(key) or [] if isinstance(item, dict))
    text = " ".join(" ".join(_strings(result)).split())
    return {n for n, slot in enumerate(case.evidence)
            if slot & shown or (n < len(case.facts) and " ".join(case.facts[n].split()) in text)}


def _recall(held_slots: Sequence[set[int]], evidence: list[set[int]]) -> float:
    """The share of evidence turns held by the union of ``held_slots`` (indexes into ``evidence``)."""
    got = set().union(*held_slots) if held_slots else set()
    return len(got) / len(evidence)


def _slots(ids: Iterable[int], case: Case) -> set[int]:
    found = set(ids)
    return {n for n, slot in enumerate(case.evidence) if slot & found}


def _chars(rows: object) -> int:
    return len(json.dumps(rows, ensure_ascii=False, separators=(",", ":")))


def _embedder(app: Any) -> Any:
    """The configured embedder (``recall.embedder``), or None when it cannot run here (said once)."""
    from lcm_framework.embedding import EmbeddingUnavailableError, select_embedder

    try:
        return select_embedder(app.plugins.embedders(), app.config)
    except EmbeddingUnavailableError as exc:
        print(f"(semantic lane skipped: {exc})")
        return None


def _fused(lists: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    """Reciprocal-rank fusion of ranked id lists."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])


def measure(project: Project, embedder: Any = None) -> list[dict[str, Any]]:
    from lcm_framework.kernel.arguments import call
    from lcm_framework.recall.grep import lexical
    from lcm_framework.recall.search import relevant
    from lcm_framework.storage.models import SearchMode, SearchTarget

    bm25 = BM25({mid: content for mid, (_, _, content) in project.turns.items()})
    ids = sorted(project.turns)
    vectors = embedder.embed([project.turns[m][2] for m in ids]) if embedder is not None else None
    app = _app(project.root, "off")
    lane_app = _app(project.root, "on") if embedder is not None else None
    tool = app.plugins.capabilities()["lcm_search"]
    rows = []
    try:
        for case in project.cases:
            wanted = set().union(*case.evidence)
            row: dict[str, Any] = {"kind": case.kind}
            for k in KS:
                started = time.perf_counter()
                results = call(app, tool, {"query": case.question, "limit": k})["results"]
                row[f"ms{k}"] = (time.perf_counter() - started) * 1000
                row[f"list{k}"] = _recall([held(r, case) for r in results], case.evidence)
                row[f"list_chars{k}"] = _chars(results)
                if lane_app is not None:
                    started = time.perf_counter()
                    results = call(lane_app, tool, {"query": case.question, "limit": k})["results"]
                    row[f"lane_ms{k}"] = (time.perf_counter() - started) * 1000
                    row[f"lane{k}"] = _recall([held(r, case) for r in results], case.evidence)
                    row[f"lane_chars{k}"] = _chars(results)
                top = bm25.rank(case.question)[:k]
                row[f"bm25{k}"] = _recall([_slots(top, case)], case.evidence)
                row[f"bm25_chars{k}"] = _chars([{"id": f"msg_{m}", "role": project.turns[m][0],
                                                 "created_at": project.turns[m][1], "text": project.turns[m][2]}
                                                for m in top])
            with app.project() as storage:
                hits = lexical(storage, case.question, SearchTarget.MESSAGES, mode=SearchMode.RANKED,
                               conversation_ids=None, since=None, limit=max(KS))
                scored = relevant(storage, case.question, SearchTarget.MESSAGES, PROMPT_ITEMS)
            for k in KS:
                row[f"messages{k}"] = _recall([_slots((int(h.id) for h in hits[:k]), case)], case.evidence)
            if vectors is not None:
                similar = vectors @ embedder.embed([case.question])[0]
                by_meaning = [ids[i] for i in sorted(range(len(ids)), key=lambda i: -similar[i])[:100]]
                fused = _fused([[int(h.id) for h in hits], by_meaning])
                for k in KS:
                    row[f"semantic{k}"] = _recall([_slots(by_meaning[:k], case)], case.evidence)
                    row[f"hybrid{k}"] = _recall([_slots(fused[:k], case)], case.evidence)
            row["prompt_relevance"] = max((h.score for h in scored if int(h.id) in wanted), default=0.0)
            rows.append(row)
        with app.project() as storage:
            for prompt in UNRELATED:
                found = relevant(storage, prompt, SearchTarget.MESSAGES, PROMPT_ITEMS)
                rows.append({"kind": "unrelated", "prompt_relevance": max((h.score for h in found), default=0.0)})
    finally:
        app.close()
        if lane_app is not None:
            lane_app.close()
    return rows


def report_threshold(rows: list[dict[str, Any]]) -> None:
    """Prompt-time recall's ``memory.recall_min_score``: with each evidence turn standing for a memory, the
    share of questions that would surface their evidence against the share of unrelated prompts that would
    surface anything, per threshold."""
    asked = [r["prompt_relevance"] for r in rows if r["kind"] != "unrelated"]
    unrelated = [r["prompt_relevance"] for r in rows if r["kind"] == "unrelated"]
    print("prompt-time threshold (relevance >= t among the best 6): "
          + "; ".join(f"t={t:.2f}: evidence surfaced {sum(v >= t for v in asked) / len(asked):.0%}, unrelated prompts "
                      f"surfacing something {sum(v >= t for v in unrelated) / len(unrelated):.0%}"
                      for t in THRESHOLDS))


def report(rows: list[dict[str, Any]]) -> None:
    report_threshold(rows)
    rows = [r for r in rows if r["kind"] != "unrelated"]
    kinds = sorted({r["kind"] for r in rows}, key=lambda k: ["single", "update", "multi", "when", "coding"].index(k))
    lists = ("lane", "list", "messages", "bm25") if "lane5" in rows[0] else ("list", "messages", "bm25")
    heads = "  ".join(f"{m + '@' + str(k):>11}" for k in KS for m in lists)
    print(f"{'kind':<8} {'n':>4}  {heads}   chars/q {'lane, ' if 'lane5' in rows[0] else ''}list vs bm25 (@5, @10)")

    def line(name: str, group: list[dict[str, Any]]) -> None:
        mean = {key: sum(r[key] for r in group) / len(group) for key in group[0] if key != "kind"}
        figures = "  ".join(f"{mean[m + str(k)]:>11.3f}" for k in KS for m in lists)
        chars = ", ".join((f"{mean[f'lane_chars{k}']:,.0f}, " if "lane5" in mean else "")
                          + f"{mean[f'list_chars{k}']:,.0f} vs {mean[f'bm25_chars{k}']:,.0f}" for k in KS)
        print(f"{name:<8} {len(group):>4}  {figures}   {chars}")

    for kind in kinds:
        line(kind, [r for r in rows if r["kind"] == kind])
    line("all", rows)
    mean = {key: sum(r[key] for r in rows) / len(rows) for key in rows[0] if key != "kind"}
    ratio = mean["list5"] / mean["bm25" + "5"] if mean["bm25" + "5"] else float("inf")
    chars = mean["list_chars5"] / mean["bm25_chars5"]
    per_kind = all(sum(r["list5"] for r in g) >= sum(r["bm255"] for r in g)
                   for g in ([r for r in rows if r["kind"] == kind] for kind in kinds))
    print(f"list recall@5 / BM25: {ratio:.2f}x (target >= 1.3x: {'MET' if ratio >= 1.3 else 'MISSED'}); "
          f">= BM25 for every kind: {'MET' if per_kind else 'MISSED'}; characters @5 {chars:.2f}x BM25's "
          f"(target <= 2x: {'MET' if chars <= 2 else 'MISSED'})")
    if "lane5" in mean:
        lane_kinds = all(sum(r["lane5"] for r in g) >= sum(r["bm255"] for r in g)
                         for g in ([r for r in rows if r["kind"] == kind] for kind in kinds))
        print(f"semantic lane on: list recall@5 {mean['lane5']:.3f} ({mean['lane5'] / mean['bm255']:.2f}x BM25, "
              f"lexical-only list {mean['list5']:.3f}), @10 {mean['lane10']:.3f} (lexical-only {mean['list10']:.3f}); "
              f">= BM25 for every kind: {'MET' if lane_kinds else 'MISSED'}; characters @5 "
              f"{mean['lane_chars5'] / mean['bm25_chars5']:.2f}x BM25's")
        lane_ms = sorted(r["lane_ms10"] for r in rows)
        print(f"lcm_search with the lane p50 {lane_ms[len(lane_ms) // 2]:.1f} ms, "
              f"p95 {lane_ms[int(len(lane_ms) * 0.95) - 1]:.1f} ms (query embedded included)")
    if "hybrid5" in mean:
        print(f"message rankings alone: embeddings alone recall@5 "
              f"{mean['semantic5']:.3f} @10 {mean['semantic10']:.3f}; fused with the lexical hits by reciprocal "
              f"rank @5 {mean['hybrid5']:.3f} @10 {mean['hybrid10']:.3f}, against lexical hits alone "
              f"{mean['messages5']:.3f} / {mean['messages10']:.3f}")
    timings = sorted(r["ms10"] for r in rows)
    print(f"lcm_search p50 {timings[len(timings) // 2]:.1f} ms, p95 {timings[int(len(timings) * 0.95) - 1]:.1f} ms "
          "(in process, limit 10, this data set)")


def scale(tmp: Path, n: int, queries: int) -> None:
    """``search`` (what ``lcm_search`` runs: three lists, fusion, neighbouring turns, merging) over ``n``
    messages imported with ``import_sources`` with the semantic lane on (so the import embeds them), drawn
    from ``bench_storage``'s Zipf vocabulary (no message repeated), for questions of three content words:
    wall and CPU time per search, lexical only and with the lane (the query's embedding included)."""
    from benchmarks.bench_storage import WORDS, Vocabulary, p95, write_sessions
    from lcm_framework.ingest.api import import_sources
    from lcm_framework.recall import search
    from lcm_framework.recall.semantic import lane

    vocabulary = Vocabulary()
    sessions = tmp / "scale-sessions"
    sessions.mkdir()
    write_sessions(sessions, vocabulary.messages(n))
    root = tmp / "scale"
    (root / ".git").mkdir(parents=True)
    app = _app(root, "on")
    try:
        embedder = lane(app.config, app.plugins)
        started = time.perf_counter()
        import_sources(app, [sessions], project=root)
        imported = time.perf_counter() - started
        rng = random.Random(5)
        rarer = [t for t in vocabulary.tail if t.isidentifier()]
        questions = [f"why did the {rng.choice(rarer)} {rng.choice(WORDS)} fail with {rng.choice(rarer)}?"
                     for _ in range(queries)]
        with app.project() as storage:
            embedded = storage.vectors.counts()
            for name, used in (("lexical lanes", None), ("with the semantic lane", embedder)):
                t0 = time.perf_counter()
                search(storage, "warm up", limit=10, embedder=used)  # the lane loads its index here
                warm = (time.perf_counter() - t0) * 1000
                wall, cpu = [], []
                for question in questions:
                    t0, c0 = time.perf_counter(), time.process_time()
                    search(storage, question, limit=10, embedder=used)
                    wall.append((time.perf_counter() - t0) * 1000)
                    cpu.append((time.process_time() - c0) * 1000)
                wall.sort()
                cpu.sort()
                vectors = sum(c.embedded for c in embedded.values())
                print(f"lcm_search's ranking over {n:,} imported messages ({vectors:,} vectors; import "
                      f"{imported:.0f} s), {queries} questions, limit 10, {name}: p50 "
                      f"{wall[len(wall) // 2]:.1f} ms wall / {cpu[len(cpu) // 2]:.1f} ms CPU, p95 {p95(wall):.1f} / "
                      f"{p95(cpu):.1f} ms (target p95 < 50 ms; first search {warm:.0f} ms)")
    finally:
        app.close()


def import_throughput(tmp: Path, n: int) -> None:
    """The same ``n`` generated messages imported with the semantic lane off, then on (embedding them in the
    import's embedding process, its model load included): messages per second each way (target: on >= 0.8x
    off)."""
    from benchmarks.bench_storage import Vocabulary, write_sessions
    from lcm_framework.ingest.api import import_sources

    sessions = tmp / "throughput-sessions"
    sessions.mkdir()
    write_sessions(sessions, Vocabulary().messages(n))
    rates = {}
    for mode in ("off", "on", "off", "on"):
        root = tmp / f"throughput-{mode}-{len(rates)}"
        (root / ".git").mkdir(parents=True)
        app = _app(root, mode)
        try:  # with the lane on, the import's embedding process loads the model while the import runs
            started = time.perf_counter()
            import_sources(app, [sessions], project=root, workers=1)
            rates.setdefault(mode, []).append(n / (time.perf_counter() - started))
        finally:
            app.close()
    off, on = max(rates["off"]), max(rates["on"])
    print(f"import of {n:,} messages in process (best of 2): lane off {off:,.0f} msg/s, lane on {on:,.0f} msg/s "
          f"({on / off:.2f}x; target >= 0.8x)")


def main(quick: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LCM_HOME"] = str(Path(tmp) / "home")
        started = time.perf_counter()
        projects = dialogue_projects(Path(tmp), quick)
        real = real_project(Path(tmp))
        if real is None:
            print(f"(real sessions skipped: {REAL} is absent)")
        else:
            projects.append(real)
        turns = sum(len(p.turns) for p in projects)
        cases = sum(len(p.cases) for p in projects)
        print(f"{len(projects)} projects, {turns:,} turns, {cases} questions "
              f"(import and compact {time.perf_counter() - started:.1f} s)")
        app = _app(projects[0].root)
        try:
            embedder = _embedder(app)
        finally:
            app.close()
        rows = [row for project in projects for row in measure(project, embedder)]
        report(rows)
        import_throughput(Path(tmp), 5_000 if quick else 50_000)
        if os.environ.get("LCM_BENCH_SKIP_SCALE") != "1":
            scale(Path(tmp), 20_000 if quick else 1_000_000, 50 if quick else 200)
    if os.environ.get("LCM_BENCH_JSON"):
        print(json.dumps(rows))


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)

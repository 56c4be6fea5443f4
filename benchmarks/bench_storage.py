"""Storage benchmarks: bytes stored per transcript byte (``footprint.py``), bulk insert vs bare
executemany, full-text search latency, CLI start-up.

Data, and why it cannot flatter the code:

* footprint: the real sessions rewritten by ``corpus.py`` (fresh ids, 30% of every text's words redrawn
  from the sessions' own vocabulary), so the single-copy text store and the compression dictionary never
  see a copy's text again; and generated tool-heavy sessions whose repetition (the same files read again
  and again) is the labelled point of that corpus (``footprint.py``);
* insert and search: messages drawn one by one from a Zipf vocabulary (``Vocabulary``) of common
  technical words, made-up terms, identifiers and paths, none of it chosen by what the code favours,
  and no message or sentence repeated. The search corpus is written as Claude Code sessions and stored
  by ``lcm import`` itself (scrubbing, the compressed text store, the import's own index updates), and
  its baseline is bare SQLite FTS5 over the same texts with the same tokenizer.

Targets (issue 2): repository insert >= 0.5x the bare ``executemany`` rate on
the same schema; full-text search p95 < 50 ms over 1,000,000 messages; ``lcm
--help`` and ``lcm plugins`` < 300 ms. ``--quick`` shrinks the data sets.
"""

from __future__ import annotations

import os
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path

import orjson

from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import NewMessage, ProjectRef, Role, SearchMode, SearchQuery
from lcm_framework.storage.selection import open_backend

BATCH = 1000
_VOCABULARY = ("error warning deploy build test cache index query schema migration timeout retry socket thread lock "
         "commit branch merge rebase config token parser lexer compile runtime memory leak profile latency "
         "docker kubernetes pod container image volume network proxy certificate handshake request response "
         "header payload json yaml toml python rust golang typescript react component render state hook "
         "database postgres sqlite transaction rollback vacuum checkpoint wal journal fsync page btree "
         "function class method module package import export dependency version release changelog issue "
         "user session conversation summary context window compaction prompt model assistant tool result")
WORDS = _VOCABULARY.split()
_SYLLABLES = "ka lo mi ne ru sa ti vo ze pa do fu gi hy je xu qua bre cli dro"


class Vocabulary:
    """A Zipf-distributed vocabulary: a few hundred frequent technical words, a long tail of made-up terms,
    identifiers and file paths. Every message is drawn fresh from it: no sentence or message repeats (so
    neither the single-copy text store nor a compression dictionary gets repeated text for free)."""

    def __init__(self, seed: int = 7) -> None:
        rng = random.Random(seed)
        syllables = _SYLLABLES.split()
        self.tail = sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(6000)})
        self.words = WORDS + self.tail
        self.cumulative = list(accumulate(1 / (rank + 1) for rank in range(len(self.words))))
        self.idents = [f"{rng.choice(WORDS)}_{rng.choice(self.tail)}{rng.randrange(100)}" for _ in range(4000)]
        self.files = [f"src/{rng.choice(WORDS)}/{rng.choice(self.tail)}.py" for _ in range(1500)]

    def sentence(self, rng: random.Random) -> str:
        words = rng.choices(self.words, cum_weights=self.cumulative, k=rng.randint(5, 14))
        words.insert(rng.randrange(len(words)), rng.choice(self.idents))
        if rng.random() < 0.4:
            words.append(f"in {rng.choice(self.files)} line {rng.randrange(2000)}")
        return " ".join(words).capitalize() + "."

    def messages(self, n: int, seed: int = 11) -> Iterator[str]:
        rng = random.Random(seed)
        for _ in range(n):
            yield " ".join(self.sentence(rng) for _ in range(rng.randint(1, 5)))


def messages(n: int, seed: int = 11) -> Iterator[str]:
    return Vocabulary().messages(n, seed)


def make_project(home: Path, name: str) -> tuple[ProjectStorage, Path]:
    config = load_config(env={"LCM_HOME": str(home)}, project=home, plugins=build_plugins())
    factory = open_backend(config, "sqlite", plugins=build_plugins(config.env))
    ref = ProjectRef(name, f"/bench/{name}")
    return factory.open_project(ref), home / "projects" / name / "lcm.db"


def bare_connection(path: Path) -> sqlite3.Connection:
    """A plain connection to a project database. Its full-text index reads message text through the view
    ``message_texts``, which names ``lcm_text`` (the store's decompression): rows inserted plain never call
    it, but SQLite needs it defined. New messages are indexed by whoever inserts them (the adapter does)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("lcm_text", 2, lambda codec, data: data, deterministic=True)
    return conn


def bench_insert(home: Path, n: int) -> None:
    texts = list(messages(n))
    repo_storage, _ = make_project(home, "insert-repo")
    conv = repo_storage.conversations.create_conversation("bench")
    started = time.perf_counter()
    for i in range(0, n, BATCH):
        repo_storage.conversations.append_messages(
            conv.conversation_id, [NewMessage(Role.USER, t, len(t) // 4) for t in texts[i:i + BATCH]])
    repo_rate = n / (time.perf_counter() - started)
    repo_storage.close()

    bare_storage, path = make_project(home, "insert-bare")
    cid = bare_storage.conversations.create_conversation("bench").conversation_id
    bare_storage.close()
    conn = bare_connection(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    now = time.time_ns() // 1000
    started = time.perf_counter()
    for i in range(0, n, BATCH):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at) "
                         "VALUES (?, ?, 'user', ?, ?, ?)",
                         [(cid, i + j, t, len(t) // 4, now) for j, t in enumerate(texts[i:i + BATCH])])
        conn.execute("INSERT INTO messages_fts (rowid, content) SELECT message_id, content FROM messages "
                     "WHERE conversation_id = ? AND seq BETWEEN ? AND ?", (cid, i, i + BATCH - 1))
        conn.execute("COMMIT")
    bare_rate = n / (time.perf_counter() - started)
    conn.close()
    print(f"bulk insert, {n:,} messages in batches of {BATCH} (full-text indexed in both):")
    print(f"  repository append_messages: {repo_rate:,.0f} msg/s")
    print(f"  bare sqlite3.executemany:   {bare_rate:,.0f} msg/s")
    print(f"  ratio: {repo_rate / bare_rate:.2f}x (target >= 0.5x)")


SESSION_MESSAGES = 1000
"""Messages per generated session file of the search corpus."""


def write_sessions(root: Path, texts: Iterator[str]) -> int:
    """``texts`` as Claude Code sessions (user and assistant turns in turn), ``SESSION_MESSAGES`` per file."""
    written = 0
    out: list[bytes] = []
    session, parent = "", None
    for n, text in enumerate(texts):
        if n % SESSION_MESSAGES == 0:
            if out:
                (root / f"{session}.jsonl").write_bytes(b"".join(out))
                out.clear()
            session, parent = str(uuid.UUID(int=n + 1)), None
        role = "user" if n % 2 == 0 else "assistant"
        uid = str(uuid.UUID(int=(n + 1) << 64))
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        out.append(orjson.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external",
                                 "cwd": "/bench/search", "sessionId": session, "version": "2.1.0", "type": role,
                                 "message": {"role": role, "content": content}, "uuid": uid,
                                 "timestamp": f"2026-01-01T00:00:00.{n % 1000:03d}Z"}) + b"\n")
        parent = uid
        written += 1
    if out:
        (root / f"{session}.jsonl").write_bytes(b"".join(out))
    return written


def bare_fts(path: Path, texts: Iterator[str]) -> sqlite3.Connection:
    """The baseline: the same texts in one bare FTS5 table with LCM's tokenizer (porter over unicode61)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'porter unicode61')")
    conn.execute("BEGIN")
    batch: list[tuple[str]] = []
    for text in texts:
        batch.append((text,))
        if len(batch) == 20_000:
            conn.executemany("INSERT INTO docs (body) VALUES (?)", batch)
            batch.clear()
    conn.executemany("INSERT INTO docs (body) VALUES (?)", batch)
    conn.execute("COMMIT")
    conn.execute("INSERT INTO docs(docs) VALUES ('optimize')")
    return conn


def bare_query(query: str, ranked: bool) -> str:
    """The FTS5 MATCH expression of ``query``: its words, all of them (full text) or any (ranked)."""
    words = [w for w in re.findall(r"\w+", query.lower()) if w not in {"why", "did", "the", "fail", "with"}]
    return (" OR " if ranked else " ").join(f'"{w}"' for w in words)


def bench_search(home: Path, n: int, queries: int) -> None:
    """Search over ``n`` messages stored by ``lcm import`` (scrubbed, in the compressed text store, indexed by
    the import's own triggers), against bare FTS5 over the same texts."""
    import io

    from lcm_framework.app import App
    from lcm_framework.ingest import import_sources
    from lcm_framework.kernel.plugins import build_plugins

    vocabulary = Vocabulary()
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    write_sessions(sessions, vocabulary.messages(n))
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    app = App(load_config(env={"LCM_HOME": str(home / "lcm")}, project=project,
                          plugins=build_plugins()), build_plugins(stderr=io.StringIO()))
    started = time.perf_counter()
    report = import_sources(app, [sessions], project=project)
    assert not report.errors and report.messages == n, (report.errors[:3], report.messages)
    imported = time.perf_counter() - started
    started = time.perf_counter()
    bare = bare_fts(home / "bare.db", vocabulary.messages(n))
    loaded = time.perf_counter() - started
    print(f"{n:,} messages ({_du(sessions) / 2**20:,.0f} MiB of sessions; every message drawn fresh, none "
          f"repeated): lcm import {imported:.0f} s ({_du(home / 'lcm') / 2**20:,.0f} MiB stored); bare FTS5 "
          f"load {loaded:.0f} s ({(home / 'bare.db').stat().st_size / 2**20:,.0f} MiB)")

    rng = random.Random(3)
    rarer = [t for t in vocabulary.tail if t.isidentifier()]
    kinds = {
        "term": lambda: rng.choice(rarer),
        "two terms": lambda: f"{rng.choice(rarer)} {rng.choice(WORDS)}",
        "identifier": lambda: rng.choice(vocabulary.idents),
        "frequent": lambda: rng.choice(WORDS[:40]),
        "question": lambda: f"why did the {rng.choice(rarer)} {rng.choice(WORDS)} fail with {rng.choice(rarer)}?",
    }
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    base: dict[str, list[float]] = {}
    with app.project(project) as storage:
        storage.lexical_search.search(SearchQuery("warm up"))
        bare.execute("SELECT rowid FROM docs WHERE docs MATCH 'warm' LIMIT 1").fetchall()
        for name, make in kinds.items():
            for _ in range(queries):
                ranked = name == "question"
                text = make()
                query = SearchQuery(text, SearchMode.RANKED if ranked else SearchMode.FULL_TEXT, limit=20)
                t0, c0 = time.perf_counter(), time.process_time()
                storage.lexical_search.search(query)
                wall.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
                cpu.setdefault(name, []).append((time.process_time() - c0) * 1000)
                t0 = time.perf_counter()
                bare.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 20",
                             (bare_query(text, ranked),)).fetchall()
                base.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
    bare.close()
    app.close()
    print(f"full-text search over {n:,} imported messages, limit 20 (LCM wall | CPU time; bare FTS5 wall):")
    for name in [*kinds, "typical mix"]:
        picked = [k for k in kinds if k not in ("frequent", "question")] if name == "typical mix" else [name]
        w = [t for k in picked for t in wall[k]]
        c = [t for k in picked for t in cpu[k]]
        b = [t for k in picked for t in base[k]]
        print(f"  {name:12s} p50 {statistics.median(w):7.2f} | {statistics.median(c):6.2f} ms   "
              f"p95 {p95(w):7.2f} | {p95(c):6.2f} ms   bare FTS5 p50 {statistics.median(b):6.2f} "
              f"p95 {p95(b):6.2f} ms ({p95(w) / max(p95(b), 1e-3):.1f}x at p95)")
    print("  target: p95 < 50 ms for the typical mix (term, two terms, identifier); CPU time excludes")
    print("  waiting for a core on a busy machine. Bare FTS5: bm25 top 20 of the same words (all of them;")
    print("  any for 'question') with no scope, no summaries and no text store to read through.")
    print("  'frequent' = one of the 40 most frequent words (each in a large share of all messages): every")
    print("  match must be scored before the top 20 are known, so its cost grows with the match count.")
    print("  'question' = RANKED mode (lcm search): three content words, any may match, in natural wording.")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18]


def median_ms(argv: list[str], runs: int) -> tuple[float, float]:
    """Median wall and CPU (user + system of the child) milliseconds of running ``argv``.

    Measured as a user runs it: bytecode caches allowed (PYTHONDONTWRITEBYTECODE removed) and written
    by one untimed warm-up run.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, capture_output=True, check=True, env=env)
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, env=env)
        wall.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def bench_cli(runs: int) -> None:
    script = Path(sys.executable).with_name("lcm")
    lcm = [str(script)] if script.exists() else [sys.executable, "-m", "lcm_framework.cli.main"]
    base, base_cpu = median_ms([sys.executable, "-c", "pass"], runs)
    print(f"start-up, median of {runs} runs (wall | CPU time):")
    print(f"  python -c pass (baseline): {base:6.0f} | {base_cpu:4.0f} ms")
    for args in (["--help"], ["plugins"]):
        took, took_cpu = median_ms([*lcm, *args], runs)
        print(f"  lcm {' '.join(args):21s} {took:6.0f} | {took_cpu:4.0f} ms  "
              f"({took / base:.1f}x the baseline; target < 300 ms)")


def _lcm(home: Path, project: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], cwd=project,
                          env={**os.environ, "LCM_HOME": str(home)}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"lcm {' '.join(args)} failed: {done.stderr[-2000:]}")


def measure_projects(label: str, corpus: Path, work: Path) -> tuple[float, float]:
    """Each directory of ``corpus`` imported into a project of its own: stored bytes per transcript byte of
    the whole ``$LCM_HOME`` after import and after ``lcm vacuum`` of every project."""
    size = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
    home = work / "home"
    folders = sorted(p for p in corpus.iterdir() if p.is_dir())
    for n, folder in enumerate(folders):
        project = work / f"project-{n}"
        (project / ".git").mkdir(parents=True)
        _lcm(home, project, "import", str(folder), "--project", str(project))
    imported = _du(home)
    for n in range(len(folders)):
        _lcm(home, work / f"project-{n}", "vacuum")
    vacuumed = _du(home)
    print(f"{label}: {size / 2**20:.1f} MB of transcripts in {len(folders)} projects")
    print(f"  stored bytes per transcript byte: {imported / size:.3f} after import, {vacuumed / size:.3f} after "
          "lcm vacuum (target <= 0.6)")
    return imported / size, vacuumed / size


def bench_footprint(home: Path, quick: bool) -> None:
    """Stored bytes per transcript byte on the corpora of issue 32: one plain copy of the real sessions, their
    perturbed copies (nothing repeated verbatim) and many small projects of perturbed copies; and the
    generated tool-heavy sessions."""
    from .corpus import SESSIONS, perturbed_copies
    from .footprint import measure, tool_heavy_corpus

    size = (5 if quick else 50) * 2**20
    if SESSIONS.is_dir():
        plain = home / "plain-corpus"
        plain.mkdir(parents=True)
        for path in sorted(SESSIONS.glob("*.jsonl")):
            shutil.copyfile(path, plain / path.name)
        measure("one plain copy of the real sessions", plain, home / "plain")
        perturbed_copies(home / "real-corpus", size)
        measure("real sessions rewritten (fresh ids, perturbed text)", home / "real-corpus", home / "real")
        rng = random.Random(32)
        for n in range(6 if quick else 24):  # small projects: 1-3 MB each, every one its own copies
            perturbed_copies(home / "small-corpus" / f"p{n:02d}", rng.randint(1, 3) * 2**20, seed=100 + n)
        measure_projects("small projects (perturbed copies, 1-3 MB each)", home / "small-corpus", home / "small")
    else:
        print(f"real sessions: skipped ({SESSIONS} is absent)")
    tool_heavy_corpus(home / "tool-corpus", size)
    measure("generated tool-heavy sessions", home / "tool-corpus", home / "tool")


def main(quick: bool) -> None:
    home = Path(tempfile.mkdtemp(prefix="lcm-bench-"))
    try:
        bench_footprint(home / "footprint", quick)
        bench_insert(home / "insert", 20_000 if quick else 200_000)
        bench_search(home / "search", 50_000 if quick else 1_000_000, 50 if quick else 200)
        bench_cli(5 if quick else 9)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)

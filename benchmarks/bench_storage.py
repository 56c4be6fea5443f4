"""Storage benchmarks: bytes stored per transcript byte (``footprint.py``), bulk insert vs bare
executemany, full-text search latency, CLI start-up.

Targets (issue 2): repository insert >= 0.5x the bare ``executemany`` rate on
the same schema; full-text search p95 < 50 ms over 1,000,000 messages; ``lcm
--help`` and ``lcm plugins`` < 300 ms. ``--quick`` shrinks the data sets.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from lcm_framework.config import load_config
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


def corpus(seed: int = 7) -> list[str]:
    """Varied sentences over a Zipf-distributed vocabulary: a few hundred frequent technical words, a long
    tail of rarer made-up terms, identifiers, file paths and numbers."""
    rng = random.Random(seed)
    syllables = _SYLLABLES.split()
    tail = sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(6000)})
    vocabulary = WORDS + tail
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    idents = [f"{rng.choice(WORDS)}_{rng.choice(tail)}{rng.randrange(100)}" for _ in range(4000)]
    files = [f"src/{rng.choice(WORDS)}/{rng.choice(tail)}.py" for _ in range(1500)]
    out = []
    for _ in range(20_000):
        words = rng.choices(vocabulary, weights, k=rng.randint(5, 14))
        words.insert(rng.randrange(len(words)), rng.choice(idents))
        if rng.random() < 0.4:
            words.append(f"in {rng.choice(files)} line {rng.randrange(2000)}")
        out.append(" ".join(words).capitalize() + ".")
    return out


def messages(n: int, seed: int = 11) -> Iterator[str]:
    rng = random.Random(seed)
    sentences = corpus()
    for _ in range(n):
        yield " ".join(rng.sample(sentences, rng.randint(1, 5)))


def make_project(home: Path, name: str) -> tuple[ProjectStorage, Path]:
    config = load_config(env={"LCM_HOME": str(home)}, project=home)
    factory = open_backend(config, "sqlite")
    ref = ProjectRef(name, f"/bench/{name}")
    return factory.open_project(ref), home / "projects" / name / "lcm.db"


def bare_connection(path: Path) -> sqlite3.Connection:
    """A plain connection to a project database. Its full-text triggers read message text through the view
    ``message_texts``, which names ``lcm_text`` (the store's decompression): rows inserted plain never call
    it, but SQLite needs it defined."""
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
        conn.execute("COMMIT")
    bare_rate = n / (time.perf_counter() - started)
    conn.close()
    print(f"bulk insert, {n:,} messages in batches of {BATCH} (FTS triggers on in both):")
    print(f"  repository append_messages: {repo_rate:,.0f} msg/s")
    print(f"  bare sqlite3.executemany:   {bare_rate:,.0f} msg/s")
    print(f"  ratio: {repo_rate / bare_rate:.2f}x (target >= 0.5x)")


def bench_search(home: Path, n: int, queries: int) -> None:
    storage, path = make_project(home, "search")
    cid = storage.conversations.create_conversation("bench").conversation_id
    tier = storage.capabilities.full_text_tier.value
    storage.close()
    conn = bare_connection(path)
    conn.execute("PRAGMA synchronous = OFF")
    started = time.perf_counter()
    base = time.time_ns() // 1000 - n * 1000
    batch: list[tuple[int, int, str, int, int]] = []
    conn.execute("BEGIN")
    for seq, text in enumerate(messages(n)):
        batch.append((cid, seq, text, len(text) // 4, base + seq * 1000))
        if len(batch) == 20_000:
            conn.executemany("INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at) "
                             "VALUES (?, ?, 'assistant', ?, ?, ?)", batch)
            batch.clear()
    if batch:
        conn.executemany("INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at) "
                         "VALUES (?, ?, 'assistant', ?, ?, ?)", batch)
    conn.execute("COMMIT")
    if tier == "fts5":
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
    conn.close()
    print(f"loaded {n:,} messages directly in {time.perf_counter() - started:.1f} s "
          f"({path.stat().st_size / 2**20:,.0f} MiB); tier {tier}")

    rng = random.Random(3)
    sentences = corpus()
    terms = sorted({w for s in sentences for w in s.lower().rstrip(".").split() if w.isidentifier()})
    common = set(WORDS)
    rarer = [t for t in terms if t not in common]
    kinds = {
        "term": lambda: rng.choice(rarer),
        "two terms": lambda: f"{rng.choice(rarer)} {rng.choice(WORDS)}",
        "identifier": lambda: rng.choice([t for t in rarer if "_" in t]),
        "frequent": lambda: rng.choice(WORDS[:40]),
        "question": lambda: f"why did the {rng.choice(rarer)} {rng.choice(WORDS)} fail with {rng.choice(rarer)}?",
    }
    config = load_config(env={"LCM_HOME": str(home)}, project=home)
    factory = open_backend(config, "sqlite")
    storage = factory.open_project(ProjectRef("search", "/bench/search"))
    storage.lexical_search.search(SearchQuery("warm up"))
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for name, make in kinds.items():
        for _ in range(queries):
            mode = SearchMode.RANKED if name == "question" else SearchMode.FULL_TEXT
            query = SearchQuery(make(), mode, limit=20)
            t0, c0 = time.perf_counter(), time.process_time()
            storage.lexical_search.search(query)
            wall.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
            cpu.setdefault(name, []).append((time.process_time() - c0) * 1000)
    storage.close()
    factory.close()
    print(f"full-text search over {n:,} messages, limit 20, through the repository (wall | CPU time):")
    for name in [*kinds, "typical mix"]:
        picked = [k for k in kinds if k not in ("frequent", "question")] if name == "typical mix" else [name]
        w = [t for k in picked for t in wall[k]]
        c = [t for k in picked for t in cpu[k]]
        print(f"  {name:12s} p50 {statistics.median(w):7.2f} | {statistics.median(c):6.2f} ms   "
              f"p95 {p95(w):7.2f} | {p95(c):6.2f} ms   max {max(w):7.2f} ms")
    print("  target: p95 < 50 ms for the typical mix (term, two terms, identifier); CPU time excludes")
    print("  waiting for a core on a busy machine;")
    print("  'frequent' = one of the 40 most frequent words (each in a large share of all messages): every")
    print("  match must be scored before the top 20 are known, so its cost grows with the match count.")
    print("  'question' = RANKED mode (lcm search): three content words, any may match, in natural wording.")


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


def bench_footprint(home: Path, quick: bool) -> None:
    from .bench_import import SESSIONS, make_corpus
    from .footprint import measure, tool_heavy_corpus

    size = (5 if quick else 50) * 2**20
    if SESSIONS.is_dir():
        make_corpus(home / "real-corpus", size)
        measure("real sessions (fresh ids)", home / "real-corpus", home / "real")
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

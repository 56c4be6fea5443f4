"""PostgreSQL backend: bulk insert vs SQLite, full-text p95 at scale, concurrent writer processes.

1. Bulk insert: the same synthetic messages appended (batches of 500) through the repository API to
   PostgreSQL and to SQLite; messages/s and the PG/SQLite ratio.
2. Full-text search p95 over 1,000,000 messages (``--quick``: 50,000): 200 one- and two-word
   queries drawn from the corpus vocabulary, ranked, limit 50; baseline: substring (trigram) search
   of the same words. The vocabulary has only 480 words, so one query word matches about 5% of all
   messages (50,000 at 1M): a worst case for ranking, which scores every match.
3. Four concurrent writer processes (own conversation each) vs one process writing the same total.
4. ``lcm import`` end to end (read, parse, scrub, store) of the same rewritten copies of the real
   sessions (``corpus.py``: fresh ids, perturbed text, no text repeated) into SQLite and into
   PostgreSQL: MB/s and messages/s, and the PG/SQLite ratio.
5. TOAST compression of the imported large columns, pglz (the default) vs lz4, on the same values:
   stored size against the plain size, and the time to write (``INSERT ... SELECT``) and read them
   back (``sum(length(...))``, which decompresses every value), best of three.

Needs LCM_TEST_POSTGRES_URL (``./dev bench`` sets it); runs in a throwaway schema.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.models import NewMessage, ProjectRef, Role, SearchMode, SearchQuery
from lcm_framework.storage.selection import open_backend

REF = ProjectRef("b" * 64, "/bench")
WORDS = [f"{stem}{n}" for stem in ("deploy", "cache", "error", "parser", "token", "socket", "schema", "lease",
                                   "commit", "branch", "summary", "vector") for n in range(40)]
BATCH = 500


def messages(count: int, seed: int) -> list[NewMessage]:
    rng = random.Random(seed)
    return [NewMessage(Role.USER if i % 2 else Role.ASSISTANT,
                       " ".join(rng.choices(WORDS, k=rng.randint(8, 40))), 30) for i in range(count)]


def config(home: Path, backend: str, schema: str) -> Any:
    return load_config(cwd=home, env={"LCM_HOME": str(home / "lcm"), "HOME": str(home)}, overrides={
        "storage.backend": backend, "postgresql.url": os.environ["LCM_TEST_POSTGRES_URL"],
        "postgresql.allow_plaintext_loopback": "true", "postgresql.schema": schema,
        "postgresql.statement_timeout_ms": "600000"}, plugins=build_plugins())


def append_all(project: Any, session: str, data: list[NewMessage]) -> float:
    conv = project.conversations.create_conversation(session)
    started = time.perf_counter()
    for i in range(0, len(data), BATCH):
        project.conversations.append_messages(conv.conversation_id, data[i:i + BATCH])
    return time.perf_counter() - started


def bulk_insert(home: Path, schema: str, count: int) -> None:
    data = messages(count, 1)
    rates = {}
    for backend in ("sqlite", "postgresql"):
        factory = open_backend(config(home / backend, backend, schema), backend, plugins=build_plugins())
        try:
            project = factory.open_project(REF)
            rates[backend] = count / append_all(project, "bulk", data)
        finally:
            factory.close()
    print(f"bulk insert, {count:,} messages in batches of {BATCH}:")
    for backend, rate in rates.items():
        print(f"  {backend:<10} {rate:>10,.0f} msg/s")
    print(f"  ratio postgresql/sqlite: {rates['postgresql'] / rates['sqlite']:.2f}")


def analyze(schema: str) -> None:
    """What autovacuum does soon after a bulk load: fresh planner statistics (run as the admin)."""
    import psycopg

    with psycopg.connect(os.environ["LCM_TEST_POSTGRES_URL"], autocommit=True) as conn:
        conn.execute(f'ANALYZE "{schema}".messages')


def search_p95(home: Path, schema: str, count: int) -> None:
    factory = open_backend(config(home / "search", "postgresql", schema), "postgresql", plugins=build_plugins())
    try:
        project = factory.open_project(ProjectRef("s" * 64, "/search"))
        started = time.perf_counter()
        for chunk in range(0, count, 50_000):
            append_all(project, f"search-{chunk}", messages(min(50_000, count - chunk), chunk))
        print(f"full-text corpus: {count:,} messages loaded in {time.perf_counter() - started:.1f} s")
        analyze(schema)
        rng = random.Random(7)
        queries = [" ".join(rng.sample(WORDS, rng.randint(1, 2))) for _ in range(200)]
        for mode in (SearchMode.FULL_TEXT, SearchMode.SUBSTRING):
            timings = []
            for text in queries:
                t = time.perf_counter()
                project.lexical_search.search(SearchQuery(text if mode is SearchMode.FULL_TEXT
                                                          else text.split()[0], mode=mode, limit=50))
                timings.append((time.perf_counter() - t) * 1000)
            timings.sort()
            p95 = timings[int(len(timings) * 0.95) - 1]
            print(f"  {mode.value:<10} p50 {statistics.median(timings):7.1f} ms   p95 {p95:7.1f} ms")
    finally:
        factory.close()


def _writer(args: tuple[str, str, int, int]) -> float:
    home, schema, count, seed = args
    factory = open_backend(config(Path(home), "postgresql", schema), "postgresql", plugins=build_plugins())
    try:
        return append_all(factory.open_project(REF), f"writer-{seed}", messages(count, seed))
    finally:
        factory.close()


def concurrent_writers(home: Path, schema: str, per_process: int) -> None:
    ctx = multiprocessing.get_context("spawn")
    started = time.perf_counter()
    _writer((str(home / "w-single"), schema, 4 * per_process, 99))
    single = 4 * per_process / (time.perf_counter() - started)
    with ctx.Pool(4) as pool:
        started = time.perf_counter()
        pool.map(_writer, [(str(home / f"w{i}"), schema, per_process, i) for i in range(4)])
        multi = 4 * per_process / (time.perf_counter() - started)
    print(f"writers, {4 * per_process:,} messages total (process start-up included):")
    print(f"  1 process   {single:>10,.0f} msg/s")
    print(f"  4 processes {multi:>10,.0f} msg/s   ratio {multi / single:.2f}")


def import_throughput(home: Path, schema: str, size: int) -> None:
    import io

    from benchmarks.corpus import perturbed_copies
    from lcm_framework.app import App
    from lcm_framework.ingest import import_sources
    from lcm_framework.kernel.plugins import build_plugins

    corpus = home / "corpus"
    nbytes = perturbed_copies(corpus, size)
    project = home / "import-project"
    project.mkdir()
    rates: dict[str, tuple[float, float]] = {}
    for backend in ("sqlite", "postgresql"):
        app = App(config(home / f"import-{backend}", backend, schema), build_plugins(stderr=io.StringIO()))
        try:
            started = time.perf_counter()
            report = import_sources(app, [corpus], project=project)
            seconds = time.perf_counter() - started
        finally:
            app.close()
        rates[backend] = (nbytes / seconds / 1e6, report.messages / seconds)
    print(f"import of {nbytes / 1e6:.1f} MB of rewritten real-session copies (read, parse, scrub, store):")
    for backend, (mbps, mps) in rates.items():
        print(f"  {backend:<10} {mbps:6.2f} MB/s  {mps:8,.0f} messages/s")
    print(f"  ratio postgresql/sqlite: {rates['postgresql'][0] / rates['sqlite'][0]:.2f}")


_TOASTED = (("native_transcripts", "payload_json"), ("messages", "content"), ("message_parts", "raw_json"),
            ("message_parts", "text"))


def toast_compression(url: str, schema: str) -> None:
    import psycopg

    print("TOAST compression of the imported columns, same values (best of 3; stored / plain size):")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        for table, column in _TOASTED:
            plain = conn.execute(f"SELECT coalesce(sum(octet_length({column})), 0) FROM {table}").fetchone()[0]
            figures = []
            for method in ("pglz", "lz4"):
                write = read = float("inf")
                for _ in range(3):
                    conn.execute("DROP TABLE IF EXISTS toast_probe")
                    conn.execute(f"CREATE TABLE toast_probe (v text COMPRESSION {method})")
                    started = time.perf_counter()
                    conn.execute(f"INSERT INTO toast_probe SELECT {column} || '' FROM {table} "  # || '': decompressed,
                                 f"WHERE {column} IS NOT NULL")  # else the stored datums are copied as they are
                    write = min(write, time.perf_counter() - started)
                    started = time.perf_counter()
                    conn.execute("SELECT sum(length(v)) FROM toast_probe").fetchone()
                    read = min(read, time.perf_counter() - started)
                size = conn.execute("SELECT pg_total_relation_size('toast_probe')").fetchone()[0]
                figures.append(f"{method} {size / max(plain, 1):.3f}, write {write * 1000:5.0f} ms, "
                               f"read {read * 1000:4.0f} ms")
            conn.execute("DROP TABLE toast_probe")
            print(f"  {table}.{column} ({plain / 2**20:.1f} MiB): " + "; ".join(figures))


def main(quick: bool) -> None:
    url = os.environ.get("LCM_TEST_POSTGRES_URL")
    if not url:
        print("skipped: LCM_TEST_POSTGRES_URL is not set (./dev bench sets it when PostgreSQL runs)")
        return
    import psycopg

    schema = f"lcm_bench_{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory() as tmp:
        try:
            bulk_insert(Path(tmp), schema, 20_000 if quick else 200_000)
            search_p95(Path(tmp), schema, 50_000 if quick else 1_000_000)
            concurrent_writers(Path(tmp), schema, 2_000 if quick else 20_000)
            import_throughput(Path(tmp), schema, 2_000_000 if quick else 20_000_000)
            toast_compression(url, schema)
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

"""Stored bytes per transcript byte, after ``lcm import`` and after ``lcm vacuum``, on two corpora.

* the real sessions of ``../shared/testdata`` rewritten with fresh ids and perturbed text (the import
  benchmark's corpus, ``corpus.py``): no copy repeats another's text, so the figure is what one session's
  worth of new text costs, not what a store that keeps each text once saves on copies (copied verbatim,
  the figure fell from 1.0 for one copy to 0.60 for six);
* generated long, tool-heavy Claude Code sessions: file reads (the same files read again and again, as
  agents do: this corpus's repetition is labelled and deliberate), shell output with timestamps,
  questions and answers, written without regard to the codec.

Baselines measured in the same run: gzip -6 of the transcript files themselves, and the bare
parse-and-insert floor (``json.loads`` each line, insert it into a bare SQLite table) for throughput.
Target (issue 19): <= 0.6 stored bytes per transcript byte on both corpora.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

MB = 2**20
_NAMES = ("parser", "lexer", "cache", "router", "worker", "pool", "index", "ledger", "session", "token", "schema",
          "queue")
_VERBS = ("load", "store", "flush", "retry", "parse", "render", "merge", "resolve", "fetch", "encode", "decode",
          "validate")


def _source_file(rng: random.Random, lines: int) -> str:
    out = [f'"""{rng.choice(_NAMES).title()} module."""', "from __future__ import annotations", ""]
    for _ in range(lines // 6):
        name, verb = rng.choice(_NAMES), rng.choice(_VERBS)
        out += [f"def {verb}_{name}_{rng.randint(0, 999)}(value: int, limit: int = {rng.randint(1, 500)}) -> int:",
                f'    """{verb.title()} the {name} within {rng.randint(1, 90)} ms."""',
                f"    if value > limit:  # {rng.choice(_NAMES)} overflow",
                f"        raise ValueError(f'{name} {{value}} exceeds {{limit}}')",
                f"    return value * {rng.randint(2, 97)} % {rng.randint(101, 9973)}", ""]
    return "\n".join(out)


class _Session:
    """One generated session's records, chained by ``parentUuid`` like Claude Code's."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.id = str(uuid.UUID(int=rng.getrandbits(128)))
        self.cwd = "/home/dev/app"
        self.parent: str | None = None
        self.lines: list[str] = []

    def add(self, kind: str, message: dict[str, object], turn: int) -> None:
        uid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        self.lines.append(json.dumps({
            "parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
            "sessionId": self.id, "version": "2.1.0", "type": kind, "uuid": uid,
            "timestamp": f"2026-03-0{1 + turn // 90}T10:{turn % 60:02d}:00Z", "message": message}))
        self.parent = uid


def _turn(session: _Session, turn: int, files: dict[str, str], paths: list[str]) -> None:
    rng = session.rng
    path = rng.choice(paths[: 8 + turn % 32])  # recent files are read again and again
    call = f"toolu_{rng.getrandbits(64):016x}"
    session.add("user", {"role": "user", "content": f"Why does {rng.choice(_VERBS)} fail in {path}?"}, turn)
    if rng.random() < 0.6:
        use = {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": f"{session.cwd}/{path}"}}
        result = files[path]
    else:
        use = {"type": "tool_use", "id": call, "name": "Bash",
               "input": {"command": f"pytest -q tests/test_{rng.choice(_NAMES)}.py"}}
        result = "\n".join(f"2026-03-01 10:{i % 60:02d}:{rng.randint(0, 59):02d} INFO {rng.choice(_NAMES)} "
                           f"{rng.choice(_VERBS)} took {rng.randint(1, 900)} ms"
                           for i in range(rng.randint(5, 80)))
    session.add("assistant", {"role": "assistant", "model": "claude-sonnet-4", "id": f"msg_{call}",
                              "content": [{"type": "text", "text": "Let me look."}, use]}, turn)
    session.add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                      "content": result}]}, turn)
    session.add("assistant", {"role": "assistant", "model": "claude-sonnet-4", "id": f"msg_{call}b", "content": [
        {"type": "text", "text": f"The {rng.choice(_NAMES)} limit is {rng.randint(1, 500)}; "
                                 f"{rng.choice(_VERBS)} it first."}]}, turn)


def tool_heavy_corpus(target: Path, size: int, seed: int = 19) -> int:
    """Generated sessions of 200 turns until ``size`` bytes; returns the bytes written."""
    rng = random.Random(seed)
    files = {f"src/{rng.choice(_NAMES)}_{n}.py": _source_file(rng, rng.randint(60, 400)) for n in range(40)}
    paths = sorted(files)
    written = 0
    while written < size:
        session = _Session(rng)
        for turn in range(200):
            _turn(session, turn, files, paths)
        data = ("\n".join(session.lines) + "\n").encode()
        out = target / f"{session.id}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        written += len(data)
    return written


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _lcm(home: Path, project: Path, *args: str) -> float:
    env = {**os.environ, "LCM_HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], cwd=project, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"lcm {' '.join(args)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def _floor(corpus: Path, db: Path) -> float:
    """Seconds to parse every line and insert it into a bare SQLite table: the floor of any import."""
    started = time.perf_counter()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE records (file TEXT, ordinal INTEGER, payload TEXT)")
    for path in sorted(corpus.rglob("*.jsonl")):
        with path.open("rb") as fh:
            rows = [(path.name, n, json.dumps(json.loads(line), separators=(",", ":")))
                    for n, line in enumerate(fh) if line.strip()]
        with conn:
            conn.executemany("INSERT INTO records VALUES (?, ?, ?)", rows)
    conn.close()
    return time.perf_counter() - started


def measure(label: str, corpus: Path, work: Path) -> dict[str, float]:
    size = _du(corpus)
    project = work / "project"
    (project / ".git").mkdir(parents=True)
    home = work / "home"
    seconds = _lcm(home, project, "import", str(corpus), "--project", str(project))
    imported = _du(home)
    _lcm(home, project, "vacuum")
    vacuumed = _du(home)
    floor = _floor(corpus, work / "floor.db")
    gz = sum(len(gzip.compress(p.read_bytes(), 6)) for p in corpus.rglob("*.jsonl"))
    figures = {"transcript_mb": size / MB, "after_import": imported / size, "after_vacuum": vacuumed / size,
               "gzip_files": gz / size, "import_mb_s": size / MB / seconds, "floor_mb_s": size / MB / floor}
    print(f"{label}: {figures['transcript_mb']:.1f} MB of transcripts")
    print(f"  stored bytes per transcript byte: {figures['after_import']:.3f} after import, "
          f"{figures['after_vacuum']:.3f} after lcm vacuum (target <= 0.6); gzip -6 of the files: "
          f"{figures['gzip_files']:.3f}")
    print(f"  import {figures['import_mb_s']:.1f} MB/s (lcm import, process start included) vs the bare "
          f"parse-and-insert floor {figures['floor_mb_s']:.1f} MB/s "
          f"({figures['import_mb_s'] / figures['floor_mb_s']:.2f}x)")
    return figures

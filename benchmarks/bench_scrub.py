"""Secret-scanning throughput with the full upstream gitleaks rule set, against a naive baseline.

Data: copies of the real Claude Code sessions in ``../shared/testdata`` written
to a temporary directory as ``.jsonl`` files, about 20 MB (``--quick``: 2 MB).
The copies repeat the sessions' text, which cannot flatter the scanner: it keeps
no result per text (what it caches is compiled regexes), and every contender
(the naive baseline, gitleaks) scans the same files.

Figures, all from the same run:
- naive: every upstream rule's regex (google-re2) run over the whole text,
  no prefilter and no validation (a lower bound of its real cost);
- ``lcm sensitive scan --gitleaks-config gitleaks.toml DIR`` as the command
  runs it in-process (keyword prefilter, entropy, allowlists, line/column
  reporting); target: at least 8x the naive rate;
- ``lcm sensitive scan DIR`` with the built-in pack (the default rules);
- the gitleaks binary (``$GITLEAKS_BIN``, else ``gitleaks`` on PATH, else
  Debian's build fetched once into ``.cache/tools``) running ``gitleaks dir
  --config gitleaks.toml`` with its own rules on the same files (its CPU
  time is the child's user + system time); target: the built-in scan at
  least 1.5x gitleaks' rate;
- for the import pipeline: ``Scrubber.scrub_record`` over the parsed records
  with the built-in pack (recursive redaction, canonical JSON, residual scan,
  SHA-256) and with the upstream rules, both protected by the formats'
  structural samples as ``lcm import`` is, and the strict reader alone.

Rates use this process's CPU time (``time.process_time``), so other work on a
shared machine does not distort the ratio; the wall time is printed too.
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path

from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.plugin import builtin_pack
from lcm_scrub_gitleaks.scan import scan_paths

from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.scrub import format_samples, scrubber_from_packs
from lcm_framework.transcripts.reader import ParsedRecord, read_records

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "testdata"
SESSIONS = SHARED / "transcripts" / "claude-code"
GITLEAKS_TOML = SHARED / "gitleaks" / "gitleaks.toml"
MB = 1_000_000


def build_corpus(target: Path, size: int) -> bytes:
    """Copy the real sessions into ``target`` until about ``size`` bytes; return all of it."""
    sources = [p.read_bytes() for p in sorted(SESSIONS.glob("*.jsonl"))]
    parts: list[bytes] = []
    total = 0
    copy = 0
    while total < size:
        for n, data in enumerate(sources):
            (target / f"copy{copy:03d}-{n}.jsonl").write_bytes(data)
            parts.append(data)
            total += len(data)
        copy += 1
    return b"".join(parts)


def _rate(size: int, seconds: float) -> float:
    return size / seconds / MB


class _Timer:
    """CPU and wall seconds of a ``with`` block."""

    def __enter__(self) -> _Timer:
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - self.cpu
        self.wall = time.perf_counter() - self.wall


def gitleaks_binary() -> str | None:
    """``$GITLEAKS_BIN``, a ``gitleaks`` on PATH, else Debian's build (``tests/scrub/gitleaks_binary.py``)."""
    from tests.scrub.gitleaks_binary import GitleaksUnavailable, ensure_gitleaks

    try:
        return str(ensure_gitleaks())
    except GitleaksUnavailable as exc:
        print(f"gitleaks: {exc}")
        return None


def run_gitleaks(binary: str, target: Path, size: int) -> float | None:
    """gitleaks' rate in MB/s of its own CPU time over ``target``, or None when it fails."""
    report = target.parent / "gitleaks-report.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run(
        [binary, "dir", str(target), "--config", str(GITLEAKS_TOML), "--no-banner", "--exit-code", "0",
         "--report-format", "json", "--report-path", str(report), "--log-level", "error"],
        capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        print(f"gitleaks failed (exit {done.returncode}): {done.stderr.strip()[:200]}")
        return None
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    findings = len(json.loads(report.read_text() or "[]"))
    print(f"gitleaks dir (its own rules): {_rate(size, cpu):8.2f} MB/s  (cpu {cpu:.1f} s, wall {wall:.1f} s, "
          f"{findings} findings)")
    return _rate(size, cpu)


def main(quick: bool) -> None:
    size = 2 * MB if quick else 20 * MB
    pack = load_gitleaks_file(GITLEAKS_TOML, "upstream")
    started = time.perf_counter()
    upstream = scrubber_from_packs([pack])
    print(f"upstream rules: {len(pack.rules)} loaded, {len(upstream.rules)} regex rules compiled "
          f"in {time.perf_counter() - started:.2f} s")

    with tempfile.TemporaryDirectory() as tmp:
        corpus = build_corpus(Path(tmp), size)
        print(f"corpus: {len(corpus) / MB:.1f} MB of transcript JSONL in {len(list(Path(tmp).iterdir()))} files")

        matches = 0
        with _Timer() as naive:
            for rule in upstream.rules:
                assert rule.regex is not None
                matches += sum(1 for _ in rule.regex.finditer(corpus))
        print(f"naive (every regex over the text): {_rate(len(corpus), naive.cpu):8.2f} MB/s  "
              f"(cpu {naive.cpu:.1f} s, wall {naive.wall:.1f} s, {matches} raw matches)")

        with _Timer() as ours:
            report = scan_paths(upstream, [Path(tmp)])
        print(f"lcm sensitive scan (upstream rules): {_rate(report.bytes, ours.cpu):8.2f} MB/s  "
              f"(cpu {ours.cpu:.1f} s, wall {ours.wall:.1f} s, {len(report.findings)} findings)")
        ratio = _rate(report.bytes, ours.cpu) / _rate(len(corpus), naive.cpu)
        print(f"ratio scan / naive: {ratio:.1f}x  (target >= 8x)")

        builtin = scrubber_from_packs([builtin_pack()])
        with _Timer() as default:
            default_report = scan_paths(builtin, [Path(tmp)])
        default_rate = _rate(default_report.bytes, default.cpu)
        print(f"lcm sensitive scan (built-in pack, {len(builtin.rules)} rules): {default_rate:8.2f} MB/s  "
              f"(cpu {default.cpu:.1f} s, wall {default.wall:.1f} s, {len(default_report.findings)} findings)")
        binary = gitleaks_binary()
        gitleaks_rate = run_gitleaks(binary, Path(tmp), len(corpus)) if binary else None
        if gitleaks_rate:
            print(f"ratio built-in scan / gitleaks: {default_rate / gitleaks_rate:.1f}x  (target >= 1.5x); "
                  f"upstream-rules scan / gitleaks: {_rate(report.bytes, ours.cpu) / gitleaks_rate:.1f}x")
        else:
            print("gitleaks: no binary (set GITLEAKS_BIN or put gitleaks on PATH); compared with the upstream "
                  f"rules in our engine instead: built-in / upstream-rules scan "
                  f"{default_rate / _rate(report.bytes, ours.cpu):.1f}x")

    records = [r.value for r in read_records(io.BytesIO(corpus)) if isinstance(r, ParsedRecord)]
    with _Timer() as reading:
        deque(read_records(io.BytesIO(corpus)), maxlen=0)  # streamed, as the import consumes it
    print(f"strict reader (parse + validate): {_rate(len(corpus), reading.cpu):8.2f} MB/s")
    samples = format_samples(build_plugins(env={}))  # what ``lcm import`` scrubs with: their keys are structural
    for name, scrubber in (("built-in pack", scrubber_from_packs([builtin_pack()], protected_samples=samples)),
                           ("upstream rules", scrubber_from_packs([pack], protected_samples=samples))):
        with _Timer() as spent:
            for value in records:
                scrubber.scrub_record(value)
        print(f"scrub_record with the {name}: {_rate(len(corpus), spent.cpu):8.2f} MB/s  "
              f"({len(records) / spent.cpu:,.0f} records/s)")

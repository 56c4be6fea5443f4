"""Secret-scanning throughput with the full upstream gitleaks rule set, against a naive baseline.

Data: copies of the real Claude Code sessions in ``../shared/testdata`` written
to a temporary directory as ``.jsonl`` files, about 20 MB (``--quick``: 2 MB).

Figures, all from the same run:
- naive: every upstream rule's regex (google-re2) run over the whole text,
  no prefilter and no validation (a lower bound of its real cost);
- ``lcm sensitive scan --gitleaks-config gitleaks.toml DIR`` as the command
  runs it in-process (keyword prefilter, entropy, allowlists, line/column
  reporting); target: at least 8x the naive rate;
- for the import pipeline: ``Scrubber.scrub_record`` over the parsed records
  with the built-in pack (recursive redaction, canonical JSON, residual scan,
  SHA-256), and the strict reader alone.
"""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path

from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.plugin import builtin_pack
from lcm_scrub_gitleaks.scan import scan_paths

from lcm_framework.scrub import scrubber_from_packs
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

        started = time.perf_counter()
        matches = 0
        for rule in upstream.rules:
            assert rule.regex is not None
            matches += sum(1 for _ in rule.regex.finditer(corpus))
        naive = time.perf_counter() - started
        print(f"naive (every regex over the text): {_rate(len(corpus), naive):8.2f} MB/s  "
              f"({naive:.1f} s, {matches} raw matches)")

        started = time.perf_counter()
        report = scan_paths(upstream, [Path(tmp)])
        ours = time.perf_counter() - started
        print(f"lcm sensitive scan (upstream rules): {_rate(report.bytes, ours):8.2f} MB/s  "
              f"({ours:.1f} s, {len(report.findings)} findings)")
        print(f"ratio scan / naive: {naive / ours * report.bytes / len(corpus):.1f}x  (target >= 8x)")

    records = [r.value for r in read_records(io.BytesIO(corpus)) if isinstance(r, ParsedRecord)]
    started = time.perf_counter()
    list(read_records(io.BytesIO(corpus)))
    reading = time.perf_counter() - started
    print(f"strict reader (parse + validate): {_rate(len(corpus), reading):8.2f} MB/s")
    for name, scrubber in (("builtin pack", scrubber_from_packs([builtin_pack()])), ("upstream rules", upstream)):
        started = time.perf_counter()
        for value in records:
            scrubber.scrub_record(value)
        spent = time.perf_counter() - started
        print(f"scrub_record with the {name}: {_rate(len(corpus), spent):8.2f} MB/s  "
              f"({len(records) / spent:,.0f} records/s)")

"""Memory quality against plain truncation, on sessions not shaped for LCM (offline summarizer, SQLite).

Long Claude Code sessions (``quality_sessions``: ~120k tokens each, quick ~40k)
with facts planted in user text, assistant text and tool output, imported with
``lcm import``, compacted with ``lcm compact --all`` and assembled with
``lcm context --budget B`` exactly as a user runs them (subprocesses). Then:

1. Fact retention at 4k/8k/16k/32k tokens: share of facts whose identifier AND
   value are in the assembled context, vs the last B tokens of the raw session
   (plain truncation, the same text rendering, as many characters as LCM's context). Targets: >= truncation at every
   budget, >= 2x where the budget is under a quarter of the session.
2. Question recall: each fact's question (worded differently, without its
   identifier) through ``lcm search``'s service; a hit is relevant when it is
   the fact's message or a summary covering it. recall@5 / @10 vs a plain
   word-overlap ranker over the raw messages (distinct shared words, stop
   words ignored). Target: recall@5 >= the baseline's.
3. Verbatim recovery: grep the identifier, expand the covering summary to its
   messages (or read the raw message) and find the planted sentence. Target 100%.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.quality_sessions import Fact, Session, build_session, write_session

BUDGETS = (4_000, 8_000, 16_000, 32_000)
POSITIONS = ("user", "assistant", "tool")
WORD = re.compile(r"\w+")


def _lcm(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], cwd=root, env=os.environ,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"lcm {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def _kept(fact: Fact, text: str) -> bool:
    return fact.key in text and fact.value in text


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _last_tokens(text: str, budget: int) -> str:
    return text[-budget * 4:]


# The baseline's own stop list (common English function words), independent of LCM's query analysis.
STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "did", "do", "does", "for", "from", "how", "in",
    "is", "it", "its", "must", "of", "on", "or", "the", "to", "was", "we", "what", "when", "where", "which",
    "who", "why", "with",
})


def _overlap_rank(question: str, messages: list[tuple[int, str]]) -> list[int]:
    words = {w for w in WORD.findall(question.lower()) if w not in STOP}
    scored = [(len(words & set(WORD.findall(text.lower()))), mid) for mid, text in messages]
    return [mid for score, mid in sorted(scored, key=lambda s: (-s[0], -s[1])) if score > 0]


def measure(session: Session, tmp: Path) -> dict:
    root = tmp / f"proj-{session.session_id[:8]}"
    (root / ".git").mkdir(parents=True)
    source = tmp / "sources"
    source.mkdir(exist_ok=True)
    session_path = write_session(session, source)
    _lcm(root, "import", str(session_path), "--project", str(root))
    raw = _lcm(root, "context", session.session_id, "--budget", str(10**9))
    started = time.perf_counter()
    _lcm(root, "compact", "--all")
    compact_s = time.perf_counter() - started
    out: dict = {"session_tokens": _tokens(raw), "facts": len(session.facts), "compact_s": compact_s,
                 "budgets": {}, "positions": {p: sum(f.position == p for f in session.facts) for p in POSITIONS}}
    for budget in BUDGETS:
        context = _lcm(root, "context", session.session_id, "--budget", str(budget))
        # Rendering (role headers, summary XML) makes the text a little larger than the budget:
        # truncation gets as much text as LCM's context actually holds.
        truncated = _last_tokens(raw, max(budget, _tokens(context)))
        out["budgets"][budget] = {
            "lcm": sum(_kept(f, context) for f in session.facts),
            "truncation": sum(_kept(f, truncated) for f in session.facts),
            "lcm_tokens": _tokens(context),
            "by_position": {p: sum(_kept(f, context) for f in session.facts if f.position == p) for p in POSITIONS},
        }
    out.update(_recall(root, session))
    return out


def _recall(root: Path, session: Session) -> dict:
    from lcm_framework.app import App
    from lcm_framework.config import load_config
    from lcm_framework.plugins import build_plugins
    from lcm_framework.recall import expand, grep_all, parse_ref, search_all

    app = App(load_config(project=root), build_plugins())
    hits5 = hits10 = base5 = base10 = recovered = 0
    search_ms: list[float] = []
    try:
        with app.project() as storage:
            conversation = storage.conversations.find_conversations(session.session_id)[-1]
            messages = storage.conversations.list_messages(conversation.conversation_id)
            plain = [(m.message_id, m.content) for m in messages]
            home = {f.key: next(m.message_id for m in messages if f.sentence in m.content) for f in session.facts}
            covering = storage.summaries.summaries_for_messages(list(home.values()))
        for fact in session.facts:
            target = home[fact.key]
            relevant = {f"msg_{target}", *covering.get(target, [])}
            t = time.perf_counter()
            ranked = search_all(app, fact.question, limit=10)
            search_ms.append((time.perf_counter() - t) * 1000)
            ids = [r.hit.id for r in ranked]
            hits5 += any(i in relevant for i in ids[:5])
            hits10 += any(i in relevant for i in ids[:10])
            baseline = _overlap_rank(fact.question, plain)
            base5 += target in baseline[:5]
            base10 += target in baseline[:10]
            recovered += _recover(app, fact, grep_all, expand, parse_ref)
    finally:
        app.close()
    return {"recall5": hits5, "recall10": hits10, "base5": base5, "base10": base10, "recovered": recovered,
            "search_ms": sorted(search_ms)}


def _recover(app, fact: Fact, grep_all, expand, parse_ref) -> bool:
    """grep the identifier, then expand what covers the hit (or read the raw message) and find the sentence."""
    for result in grep_all(app, fact.key, limit=20):
        for group in result.groups:
            ref = group.summary_id or f"msg_{group.hits[0].id}"
            with app.project() as storage:
                expansion = expand(storage, parse_ref(ref), depth=64, include_messages=True, token_cap=10**9)
            if expansion and any(fact.sentence in node.content for node in expansion.messages()):
                return True
    return False


def main(quick: bool = False) -> None:
    turns, n_facts, seeds = (90, 20, (1,)) if quick else (260, 40, (1, 2))
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LCM_HOME"] = str(Path(tmp) / "home")
        for seed in seeds:
            session = build_session(seed, turns, n_facts, cwd=str(Path(tmp) / f"proj-seed{seed}"))
            runs.append(measure(session, Path(tmp)))
    facts = sum(r["facts"] for r in runs)
    size = sum(r["session_tokens"] for r in runs) // len(runs)
    print(f"{len(runs)} session(s) of ~{size:,} tokens, {facts} planted facts "
          f"(compact --all {sum(r['compact_s'] for r in runs):.1f} s incl. process start)")
    print(f"{'budget':>8} {'LCM':>7} {'truncation':>11} {'ratio':>6} {'context tokens':>15}  target")
    for budget in BUDGETS:
        lcm = sum(r["budgets"][budget]["lcm"] for r in runs)
        trunc = sum(r["budgets"][budget]["truncation"] for r in runs)
        used = max(r["budgets"][budget]["lcm_tokens"] for r in runs)
        need = 2.0 if budget < size / 4 else 1.0
        ratio = lcm / trunc if trunc else float("inf") if lcm else 1.0
        met = lcm >= need * trunc
        print(f"{budget:>8,} {lcm / facts:>7.0%} {trunc / facts:>11.0%} {ratio:>6.1f} {used:>15,}  "
              f">= {need:.0f}x truncation: {'MET' if met else 'MISSED'}")
    planted = {p: sum(r["positions"][p] for r in runs) for p in POSITIONS}
    print("LCM's share by where the fact was planted: " + "; ".join(
        f"{budget:,}: " + ", ".join(f"{p} {sum(r['budgets'][budget]['by_position'][p] for r in runs)}/{planted[p]}"
                                    for p in POSITIONS) for budget in BUDGETS))
    r5, r10 = sum(r["recall5"] for r in runs), sum(r["recall10"] for r in runs)
    b5, b10 = sum(r["base5"] for r in runs), sum(r["base10"] for r in runs)
    print(f"question recall@5 {r5 / facts:.0%}, @10 {r10 / facts:.0%}; word-overlap baseline @5 {b5 / facts:.0%}, "
          f"@10 {b10 / facts:.0%}; target recall@5 >= baseline: {'MET' if r5 >= b5 else 'MISSED'}")
    timings = sorted(t for r in runs for t in r["search_ms"])
    print(f"  search p50 {timings[len(timings) // 2]:.1f} ms, p95 {timings[int(len(timings) * 0.95) - 1]:.1f} ms "
          f"(in process, this data set)")
    recovered = sum(r["recovered"] for r in runs)
    print(f"verbatim recovery (grep identifier + expand): {recovered}/{facts} "
          f"({recovered / facts:.0%}, target 100%: {'MET' if recovered == facts else 'MISSED'})")
    if os.environ.get("LCM_BENCH_JSON"):
        print(json.dumps({"runs": [{k: v for k, v in r.items() if k != "search_ms"} for r in runs]}))


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)

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
   identifier) through ``lcm search``'s service; a hit is relevant when its own
   text (the message, the summary, the memory) holds the fact's answer, the same
   rule for LCM and for the baseline. recall@5 / @10 vs a plain word-overlap
   ranker over the raw messages (distinct shared words, stop words ignored).
   Target: recall@5 >= the baseline's.
3. Verbatim recovery: grep the identifier, expand the covering summary to its
   messages (or read the raw message) and find the planted sentence. Target 100%.
4. Promotion on the real sessions under ``../shared/testdata`` (skipped when absent): precision and recall
   of the memories ``lcm compact --all`` promotes against a hand-labelled list (``memory_labels``), beside a
   plain baseline: every sentence of any message that the kind patterns match, and every shell command
   the agent ran.

Every figure is given for both fact shapes (``quality_sessions.SHAPES``): ticket codes and plain words.
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

from benchmarks.memory_labels import LABELS, precision_recall
from benchmarks.quality_sessions import SHAPES, Fact, Session, build_session, write_session

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
    from lcm_framework.kernel.plugins import build_plugins
    from lcm_framework.recall import expand, grep_all, parse_ref, search_all

    app = App(load_config(project=root, plugins=build_plugins()), build_plugins())
    hits5 = hits10 = base5 = base10 = recovered = 0
    search_ms: list[float] = []
    try:
        with app.project() as storage:
            conversation = storage.conversations.find_conversations(session.session_id)[-1]
            messages = storage.conversations.list_messages(conversation.conversation_id)
            plain = [(m.message_id, m.content) for m in messages]
            texts = dict(plain)
            for fact in session.facts:
                t = time.perf_counter()
                ranked = search_all(app, fact.question, limit=10)
                search_ms.append((time.perf_counter() - t) * 1000)
                answers = [fact.value in _text_of(storage, r.hit.id, texts) for r in ranked]
                hits5 += any(answers[:5])
                hits10 += any(answers[:10])
                baseline = [fact.value in texts[mid] for mid in _overlap_rank(fact.question, plain)[:10]]
                base5 += any(baseline[:5])
                base10 += any(baseline[:10])
        for fact in session.facts:
            recovered += _recover(app, fact, grep_all, expand, parse_ref)
    finally:
        app.close()
    return {"recall5": hits5, "recall10": hits10, "base5": base5, "base10": base10, "recovered": recovered,
            "search_ms": sorted(search_ms)}


def _text_of(storage, hit_id: str, messages: dict[int, str]) -> str:
    """The text a search hit itself shows: its message, summary or memory."""
    if hit_id.startswith("msg_"):
        return messages.get(int(hit_id[4:]), "")
    if hit_id.startswith("sum_"):
        summary = storage.summaries.get_summary(hit_id)
        return summary.content if summary else ""
    if hit_id.startswith("mem_"):
        memory = storage.promoted_memory.get_memory(int(hit_id[4:]))
        return memory.content if memory else ""
    return ""


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
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LCM_HOME"] = str(Path(tmp) / "home")
        for shape in SHAPES:
            runs = [measure(build_session(seed, turns, n_facts, cwd=str(Path(tmp) / f"proj-{shape}{seed}"),
                                          shape=shape), Path(tmp)) for seed in seeds]
            print(f"\n--- facts named by {'ticket codes (AB-1234)' if shape == 'code' else 'plain words'} ---")
            _report(runs)
        _promotion(Path(tmp))


def _report(runs: list[dict]) -> None:
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
          f"@10 {b10 / facts:.0%} (a hit counts when its own text holds the answer); target recall@5 >= "
          f"baseline: {'MET' if r5 >= b5 else 'MISSED'}")
    timings = sorted(t for r in runs for t in r["search_ms"])
    print(f"  search p50 {timings[len(timings) // 2]:.1f} ms, p95 {timings[int(len(timings) * 0.95) - 1]:.1f} ms "
          f"(in process, this data set)")
    recovered = sum(r["recovered"] for r in runs)
    print(f"verbatim recovery (grep identifier + expand): {recovered}/{facts} "
          f"({recovered / facts:.0%}, target 100%: {'MET' if recovered == facts else 'MISSED'})")
    if os.environ.get("LCM_BENCH_JSON"):
        print(json.dumps({"runs": [{k: v for k, v in r.items() if k != "search_ms"} for r in runs]}))


def _promotion(tmp: Path) -> None:
    """Promotion precision and recall on the real sessions against the hand labels, beside the baseline."""
    sessions = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "transcripts" / "claude-code"
    print("\n--- promotion on the real sessions (hand-labelled: benchmarks/memory_labels.py) ---")
    if not sessions.is_dir():
        print(f"skipped: needs the shared test data folder {sessions}, which is absent here")
        return
    root = tmp / "real-sessions"
    (root / ".git").mkdir(parents=True)
    for path in sorted(sessions.glob("*.jsonl")):
        _lcm(root, "import", str(path), "--project", str(root))
    _lcm(root, "compact", "--all")
    promoted = [m["content"] for m in json.loads(_lcm(root, "memory", "list", "--json"))["memories"]]
    baseline = _pattern_baseline(root)
    scores = {}
    for name, texts in (("LCM promotion", promoted), ("pattern baseline", baseline)):
        precision, recall, count = precision_recall(texts)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores[name] = f1
        print(f"{name:>17}: {count:>3} memories, precision {precision:.0%}, recall {recall:.0%} "
              f"of {len(LABELS)} labelled, F1 {f1:.2f}")
    print(f"target F1 above the baseline's: "
          f"{'MET' if scores['LCM promotion'] > scores['pattern baseline'] else 'MISSED'}")


def _pattern_baseline(root: Path) -> list[str]:
    """Every sentence of any message the kind patterns match, and every shell command the agent ran."""
    from lcm_framework.app import App
    from lcm_framework.config import load_config
    from lcm_framework.kernel.plugins import build_plugins
    from lcm_framework.memory.extract import SHELL_TOOLS, sentences
    from lcm_framework.storage.models import PartKind

    app = App(load_config(project=root, plugins=build_plugins()), build_plugins())
    found: list[str] = []
    try:
        with app.project() as storage:
            for conversation in storage.conversations.list_conversations():
                messages = storage.conversations.list_messages(conversation.conversation_id)
                parts = storage.conversations.list_parts([m.message_id for m in messages])
                for message in messages:
                    found += [text for _kind, text in sentences(message)]
                    calls = [p for p in parts.get(message.message_id, [])
                             if p.kind is PartKind.TOOL_CALL and (p.tool_name or "").lower() in SHELL_TOOLS]
                    found += [f"Command: {json.loads(p.text or '{}').get('command', '')}" for p in calls]
    finally:
        app.close()
    return list(dict.fromkeys(found))


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)

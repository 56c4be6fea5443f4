"""Synthetic long Claude Code sessions with planted facts, for ``bench_quality``.

Written without looking at how LCM scores lines: a fact is a plain sentence
(varied wording, random identifiers and values) inside a user request, an
assistant reply or a tool result (a config file, a log, a design note); the
filler around it comes from a bank of ordinary coding-session turns that are
just as full of numbers, paths, hashes, errors and decisions. Each fact comes
with a question a person would ask later, worded differently and without the
fact's unique identifier.

Two shapes of fact (``SHAPES``): ``code`` names each fact by a ticket code (``AB-1234``, an identifier shape
summarizers tend to weigh higher) in templates that may say "decided", "root cause" or "the fix"; ``plain``
names it by two ordinary words ("quiet harbor") in templates reworded without those phrases. A figure that
holds only for ``code`` flatters the algorithm.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

AREAS = ["invoice", "thumbnail", "export", "search", "webhook", "ledger", "avatar", "billing", "catalog",
         "inventory", "shipping", "notification", "analytics", "checkout", "onboarding", "pricing", "refund",
         "tax", "loyalty", "audit", "payroll", "calendar", "upload", "session", "geocoding"]
KINDS = ["worker", "cache", "relay", "scheduler", "indexer", "gateway", "queue", "importer", "exporter", "daemon"]
PEOPLE = ["Priya", "Mateo", "Ingrid", "Kwame", "Yuki", "Tomasz", "Aisha", "Lars", "Noor", "Diego", "Hana",
          "Olu", "Sven", "Mei", "Rafael", "Zofia", "Arjun", "Elif", "Bruno", "Keiko"]
FILES = ["src/{a}/{k}.py", "src/{a}/models.py", "tests/test_{a}_{k}.py", "config/{a}.yaml", "lib/{a}/client.ts",
         "cmd/{a}-{k}/main.go", "docs/{a}.md", "scripts/run_{k}.sh"]


def _code(rng: random.Random) -> str:
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    return f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randint(1000, 9999)}"


PLAIN_WORDS = ("amber", "quiet", "harbor", "maple", "copper", "winter", "velvet", "meadow", "lantern", "orchard",
               "pebble", "saffron", "thunder", "willow", "garnet", "falcon", "juniper", "marble", "cinder", "tulip",
               "beacon", "clover", "ember", "fjord", "glacier", "hazel", "indigo", "jasper", "kestrel", "linen")
SHAPES = ("code", "plain")
# The ``code`` templates' phrases that summarizers reward, and how the ``plain`` shape says the same thing.
PLAIN_REWORDING = {
    "(decided in {id})": "(agreed at {id})",
    "; the fix is in {id}.": "; {id} repairs it.",
    "Root cause for the {c} crashes: {v}, patched by {id}.": "The {c} kept crashing from {v}, patched by {id}.",
}


def _plain(rng: random.Random) -> str:
    return " ".join(rng.sample(PLAIN_WORDS, 2))


def _hex(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


@dataclass(frozen=True, slots=True)
class Fact:
    """A planted fact: its sentence, the strings that prove it survived, and a later question."""

    sentence: str
    key: str  # the unique identifier (never in the question)
    value: str  # the answer
    question: str
    position: str  # user | assistant | tool


# (sentence templates, question templates, value maker). {c} is the component, {id} the identifier.
FACT_KINDS: list[tuple[list[str], list[str], str]] = [
    (["In staging the {c} listens on port {v}; the firewall rule is {id}.",
      "Heads up: the {c} was moved to port {v} under change {id}.",
      "{id} put the {c} behind port {v} so it stops clashing with the proxy."],
     ["which port does the {c} listen on", "what port was the {c} moved to"], "port"),
    (["We agreed to raise the {c} timeout to {v} seconds after incident {id}.",
      "After {id} the timeout of the {c} is {v} seconds, not the old default.",
      "The {c} now gives up after {v} seconds (decided in {id})."],
     ["what timeout did we agree for the {c}", "how many seconds before the {c} gives up"], "seconds"),
    (["{v} owns the {c} from now on, so ask them before touching {id}.",
      "Ownership of the {c} moved to {v} last sprint; the handover doc is {id}.",
      "For anything about the {c}, {v} is the owner (see {id})."],
     ["who owns the {c}", "who is responsible for the {c} now"], "person"),
    (["Pin the {c} client to version {v}; anything newer breaks {id}.",
      "The {c} only works with client version {v} because of {id}.",
      "We pinned the client library of the {c} at {v} (tracked in {id})."],
     ["which client version is the {c} pinned to", "what version of the client does the {c} need"], "version"),
    (["The {c} processes batches of {v} records at a time, per {id}.",
      "Batch size for the {c} is {v} rows; {id} has the load test.",
      "{id}: the {c} handles {v} records per batch before it commits."],
     ["how many records per batch does the {c} process", "what batch size does the {c} use"], "count"),
    (["The {c} writes its output to the bucket {v}; retention is set in {id}.",
      "Output of the {c} lands in bucket {v} (policy {id}).",
      "{id} switched the {c} to write into bucket {v}."],
     ["which bucket does the {c} write its output to", "where does the output of the {c} land"], "bucket"),
    (["The {c} crash was caused by {v}; the fix is in {id}.",
      "Root cause for the {c} crashes: {v}, patched by {id}.",
      "{id} explains why the {c} crashed: {v}."],
     ["what caused the {c} to crash", "why did the {c} crash"], "cause"),
    (["The gateway throttles the {c} at {v} requests per minute ({id}).",
      "Rate limit for the {c} is {v} requests a minute since {id}.",
      "{id} caps the {c} at {v} requests per minute."],
     ["what rate limit applies to the {c}", "how many requests per minute can the {c} make"], "rate"),
    (["The {c} needs the environment variable {v} set, or it refuses to start ({id}).",
      "Without {v} in its environment the {c} will not start; see {id}.",
      "{id}: remember to export {v} before starting the {c}."],
     ["which environment variable does the {c} need to start", "what must be set before starting the {c}"],
     "env"),
    (["The {c} migration has to be finished by {v}; the plan is {id}.",
      "Deadline for migrating the {c}: {v} (plan {id}).",
      "{id} says we finish the {c} migration by {v}."],
     ["when is the {c} migration due", "by when must we finish migrating the {c}"], "date"),
]

CAUSES = ["a null region code", "an unbounded retry loop", "a stale DNS entry", "clock skew on the replica",
          "a missing index on created_at", "an expired client certificate", "a UTF-16 byte order mark",
          "a race in the connection pool", "integer overflow in the counter", "a leaked file descriptor"]


def _value(kind: str, rng: random.Random) -> str:
    if kind == "port":
        return str(rng.randint(7000, 9899))
    if kind == "seconds":
        return str(rng.randint(31, 899))
    if kind == "person":
        return f"{rng.choice(PEOPLE)} {rng.choice('BCDFGKLMNPRST')}{rng.choice('aeiou')}{rng.choice('lnrst')}ova"
    if kind == "version":
        return f"{rng.randint(2, 9)}.{rng.randint(10, 40)}.{rng.randint(0, 19)}"
    if kind == "count":
        return str(rng.randint(120, 9000))
    if kind == "bucket":
        return f"s3-{rng.choice(AREAS)}-{_hex(rng, 5)}"
    if kind == "cause":
        return f"{rng.choice(CAUSES)} in build {_hex(rng, 6)}"
    if kind == "rate":
        return str(rng.randint(40, 4000))
    if kind == "env":
        suffix = rng.choice(["TOKEN_PATH", "REGION", "SHARD", "MODE"])
        return f"{rng.choice(AREAS).upper()}_{suffix}_{rng.randint(2, 99)}"
    return f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def make_fact(rng: random.Random, component: str, position: str, shape: str = "code",
              taken: frozenset[str] = frozenset()) -> Fact:
    sentences, questions, kind = rng.choice(FACT_KINDS)
    key, value = _code(rng), _value(kind, rng)
    template = rng.choice(sentences)
    if shape == "plain":
        key = next(k for k in iter(lambda: _plain(rng), None) if k not in taken)
        for phrase, plain in PLAIN_REWORDING.items():
            template = template.replace(phrase, plain)
    sentence = template.format(c=component, v=value, id=key)
    sentence = sentence[0].upper() + sentence[1:]
    question = rng.choice(questions).format(c=component) + "?"
    return Fact(sentence, key, value, question, position)


# --- filler --------------------------------------------------------------------------------------

USER_ASKS = [
    "Can you look at why {f} is slow when the {c} runs? It took {n} ms on my machine.",
    "Please add a test for the {c} edge case where the payload is empty.",
    "The CI run {h} failed again on {f}, can you check?",
    "Let's refactor {f} so the {c} does not import the whole settings module.",
    "What does the {c} do with duplicate events? I saw {n} of them in the logs yesterday.",
    "Rename the helper in {f} to something clearer and update the callers.",
    "Can you run the {a} tests and tell me what breaks?",
    "I think the {c} leaks memory, RSS grows by about {n} MB an hour.",
    "Please review the diff for {f} before I push it.",
    "Make the {c} log at debug level only when LOG_VERBOSE is on.",
]
ASSISTANT_SAYS = [
    "I'll start by reading {f} to see how the {c} is wired.",
    "The {c} retries with exponential backoff; the base delay is {n} ms and it caps at 5 attempts.",
    "I updated {f} and the {a} tests pass locally ({n} passed).",
    "Looking at the stack trace, the failure comes from the fixture, not the {c} itself.",
    "I'll run the linter and the type checker before changing anything else.",
    "The change touches {f} only; no migration is needed.",
    "Done. I also removed an unused import in {f}.",
    "It looks like the {c} reads its config once at start-up, so a restart is required after edits.",
    "I found {n} call sites of the old helper; I'll update them one file at a time.",
    "The benchmark went from {n} ms to {m} ms after caching the parsed schema.",
]


def _fill(rng: random.Random, template: str) -> str:
    a, k = rng.choice(AREAS), rng.choice(KINDS)
    return template.format(
        a=a, c=f"{a} {k}", f=rng.choice(FILES).format(a=a, k=k), n=rng.randint(2, 900),
        m=rng.randint(2, 900), h=_hex(rng),
    )


def _pytest_output(rng: random.Random) -> str:
    a = rng.choice(AREAS)
    lines = ["============================= test session starts ==============================",
             f"platform linux -- Python 3.11.{rng.randint(2, 9)}, pytest-8.{rng.randint(0, 3)}.{rng.randint(0, 4)}",
             f"collected {rng.randint(20, 400)} items", ""]
    for _ in range(rng.randint(6, 30)):
        k = rng.choice(KINDS)
        lines.append(f"tests/test_{a}_{k}.py::test_{rng.choice(['parse', 'retry', 'flush', 'merge', 'empty'])}_"
                     f"{rng.randint(1, 60)} {rng.choice(['PASSED', 'PASSED', 'PASSED', 'FAILED', 'SKIPPED'])}")
    if rng.random() < 0.4:
        lines += [f"E   AssertionError: assert {rng.randint(1, 99)} == {rng.randint(1, 99)}",
                  f"tests/test_{a}_worker.py:{rng.randint(10, 400)}: AssertionError"]
    passed, failed, seconds = rng.randint(5, 300), rng.randint(0, 4), rng.uniform(1, 90)
    lines.append(f"==== {passed} passed, {failed} failed in {seconds:.2f}s ====")
    return "\n".join(lines)


def _source_file(rng: random.Random) -> str:
    a, k = rng.choice(AREAS), rng.choice(KINDS)
    lines = [f'"""The {a} {k}."""', "", "from __future__ import annotations", "", "import logging", "",
             f"LOG = logging.getLogger({a!r})", f"MAX_RETRIES = {rng.randint(2, 9)}", ""]
    for _ in range(rng.randint(3, 9)):
        verb = rng.choice(["load", "parse", "flush", "send", "merge", "split", "score"])
        name = f"{verb}_{rng.choice(['rows', 'batch', 'event', 'item'])}"
        lines += [f"def {name}(payload: dict, limit: int = {rng.randint(10, 500)}) -> list:",
                  f"    LOG.debug('{name} %s', payload.get('id'))",
                  "    out = [x for x in payload.get('items', []) if x.get('size', 0) < limit]",
                  f"    if len(out) > {rng.randint(100, 999)}:",
                  "        raise ValueError('too many items')",
                  "    return out", ""]
    return "\n".join(lines)


def _log_output(rng: random.Random) -> str:
    a, k = rng.choice(AREAS), rng.choice(KINDS)
    start = datetime(2026, 3, 1, 8, 0, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 5000))
    lines = []
    for n in range(rng.randint(8, 40)):
        level = rng.choice(["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"])
        when = (start + timedelta(seconds=n * rng.randint(1, 30))).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines.append(f"{when} {level} {a}-{k}[{rng.randint(100, 9999)}] "
                     f"{rng.choice(['processed', 'skipped', 'retrying', 'flushed', 'connected'])} "
                     f"{rng.randint(1, 5000)} items in {rng.randint(1, 900)}ms shard={rng.randint(0, 31)}")
    return "\n".join(lines)


def _config_file(rng: random.Random) -> str:
    a = rng.choice(AREAS)
    lines = [f"# config/{a}.yaml", f"service: {a}", "workers:"]
    for k in rng.sample(KINDS, rng.randint(2, 5)):
        lines += [f"  {k}:", f"    replicas: {rng.randint(1, 12)}", f"    memory: {rng.randint(128, 4096)}Mi",
                  f"    queue: {a}-{k}-{_hex(rng, 4)}"]
    return "\n".join(lines)


def _git_log(rng: random.Random) -> str:
    return "\n".join(f"{_hex(rng)} {rng.choice(['fix', 'feat', 'chore', 'refactor'])}({rng.choice(AREAS)}): "
                     f"{rng.choice(['handle empty batch', 'bump deps', 'retry on 503', 'split module', 'add metrics'])}"
                     for _ in range(rng.randint(5, 20)))


TOOL_OUTPUTS = [_pytest_output, _source_file, _log_output, _config_file, _git_log]
TOOL_CALLS = [("Bash", "command", "pytest -q tests/"), ("Read", "file_path", "src/app.py"),
              ("Bash", "command", "tail -n 200 /var/log/app.log"), ("Read", "file_path", "config/app.yaml"),
              ("Bash", "command", "git log --oneline -20")]


def _embed(rng: random.Random, body: str, sentence: str, style: str) -> str:
    """``sentence`` inside ``body`` as a comment, log line or note, at a random line."""
    lines = body.split("\n")
    note = {"log": f"2026-03-02T10:{rng.randint(10, 59)}:00Z INFO note: {sentence}",
            "comment": f"# NOTE: {sentence}", "plain": sentence}[style]
    lines.insert(rng.randint(1, len(lines)), note)
    return "\n".join(lines)


# --- sessions ------------------------------------------------------------------------------------


@dataclass
class Session:
    session_id: str
    lines: list[dict]
    facts: list[Fact]


def build_session(seed: int, turns: int, n_facts: int, cwd: str, shape: str = "code") -> Session:
    """``turns`` exchanges (user ask, assistant tool call, tool result, assistant reply) with facts planted,
    named in ``shape`` (``SHAPES``)."""
    rng = random.Random(seed if shape == "code" else f"{shape}:{seed}")
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    components = rng.sample([f"{a} {k}" for a in AREAS for k in KINDS], n_facts)
    where = sorted(rng.sample(range(turns - 4), n_facts))  # never in the last turns (the fresh tail)
    planted: dict[int, Fact] = {}
    for t, c in zip(where, components, strict=True):
        taken = frozenset(f.key for f in planted.values())
        planted[t] = make_fact(rng, c, rng.choice(["user", "assistant", "tool"]), shape, taken)
    clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    lines: list[dict] = []
    parent: str | None = None

    def add(role: str, content: object) -> None:
        nonlocal parent, clock
        clock += timedelta(seconds=rng.randint(5, 90))
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        message: dict[str, object] = {"role": role, "content": content}
        if role == "assistant":
            message.update({"id": f"msg_{_hex(rng, 24)}", "type": "message", "model": "claude-sonnet-4"})
        record = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
                  "version": "1.0.98", "type": role, "uuid": uid,
                  "timestamp": clock.isoformat().replace("+00:00", "Z"),
                  "message": message}
        lines.append(record)
        parent = uid

    for turn in range(turns):
        fact = planted.get(turn)
        ask = _fill(rng, rng.choice(USER_ASKS))
        if fact and fact.position == "user":
            ask = f"{ask} {fact.sentence} {_fill(rng, rng.choice(USER_ASKS))}"
        add("user", ask)
        tool, arg, default = rng.choice(TOOL_CALLS)
        make_output = TOOL_OUTPUTS[TOOL_CALLS.index((tool, arg, default))]
        output = make_output(rng)
        if fact and fact.position == "tool":
            output = _embed(rng, output, fact.sentence, {"Bash": "log"}.get(tool, "comment"))
        call_id = f"toolu_{_hex(rng, 20)}"
        add("assistant", [{"type": "text", "text": _fill(rng, rng.choice(ASSISTANT_SAYS))},
                          {"type": "tool_use", "id": call_id, "name": tool, "input": {arg: default}}])
        add("user", [{"type": "tool_result", "tool_use_id": call_id, "content": output}])
        reply = " ".join(_fill(rng, rng.choice(ASSISTANT_SAYS)) for _ in range(rng.randint(1, 3)))
        if fact and fact.position == "assistant":
            reply = f"{reply} {fact.sentence} {_fill(rng, rng.choice(ASSISTANT_SAYS))}"
        add("assistant", [{"type": "text", "text": reply}])
    return Session(sid, lines, list(planted.values()))


def write_session(session: Session, directory: Path) -> Path:
    path = directory / f"{session.session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in session.lines), encoding="utf-8")
    return path

"""Stored transcript text is untrusted: no text command lets an escape or control character reach the terminal
raw (it shows as a ``\\uXXXX`` escape), and ``--json`` gives the exact text back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lcm_framework.output import terminal_safe
from tests.conftest import OFFLINE_ENV

# SGR colour, cursor hiding, an OSC 52 clipboard write, an OSC 8 hyperlink, a lone ESC, carriage return,
# backspace, BEL, a C1 CSI (U+009B), DEL, bidi override/pop and isolates: all a terminal would act on.
HOSTILE = ("red \x1b[31mALERT\x1b[0m hide \x1b[?25l clip \x1b]52;c;Y2F0IH4vLnNzaC9pZF9yc2E=\x07 "
           "link \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ lone \x1b end cr \r over bs \b\b "
           "bel \x07 c1 \x9b2J del \x7f bidi \u202eevil\u202c iso \u2066x\u2069 done")
FORBIDDEN = frozenset(chr(c) for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0),
                                       *range(0x202a, 0x202f), *range(0x2066, 0x206a)])
SESSION = "5e55e55e-0000-4000-8000-00000000e5c0"
ROOT = "/work/proj\x1b[2Jcleared"  # the session's working directory: the project root shown by status/stats
PROMPT = "please run create-next-app and show me: " + HOSTILE


def _records() -> list[dict[str, object]]:
    """A Claude Code session whose prompt, tool output and answers carry HOSTILE, long enough to compact."""
    filler = " ".join(f"step{n} of the scaffold wrote config file number {n} for the app" for n in range(60))
    contents: list[tuple[str, object]] = [("user", PROMPT)]
    for n in range(6):
        call = f"toolu_{n:02d}"
        contents += [
            ("assistant", [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "npx x"}}]),
            ("user", [{"type": "tool_result", "tool_use_id": call, "content": f"output {n} {HOSTILE} {filler}"}]),
            ("assistant", [{"type": "text", "text": f"done {n}: {HOSTILE} {filler}"}]),
        ]
    contents.append(("user", "thanks"))
    records: list[dict[str, object]] = []
    parent = None
    for n, (role, content) in enumerate(contents):
        uid = f"00000000-0000-4000-8000-{n:012d}"
        records.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": ROOT,
                        "sessionId": SESSION, "version": "2.0.28", "type": role, "uuid": uid,
                        "message": {"role": role, "content": content},
                        "timestamp": f"2025-10-14T14:{n:02d}:00.000Z"})
        parent = uid
    return records


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    """``lcm`` as a real subprocess with its output as bytes (text mode would turn \\r into \\n)."""
    return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "--project", ROOT, *args],
                          env=env, capture_output=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("hostile")
    transcript = base / "projects" / "hostile" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    home = base / "home"
    home.mkdir()
    values = {k: v for k, v in os.environ.items() if not k.startswith("LCM_") or k == "LCM_TEST_POSTGRES_URL"}
    values.update(OFFLINE_ENV, HOME=str(home), LCM_HOME=str(home / ".lcm"), COLUMNS="100")
    for args in (("import", str(transcript)), ("compact", "--all"), ("memory", "add", PROMPT, "--tag", "x\x1b[1m")):
        done = _run(values, *args)
        assert done.returncode == 0, done.stderr.decode()
    return values


def _summary_id(env: dict[str, str]) -> str:
    found = json.loads(_run(env, "grep", "ALERT", "--mode", "substring", "--scope", "summaries", "--json").stdout)
    return str(found["summary_hits"][0]["id"])


def _commands(env: dict[str, str]) -> list[list[str]]:
    summary = _summary_id(env)
    return [
        ["grep", "ALERT"], ["grep", "ALERT", "--include-meta"], ["grep", "ALERT", "--mode", "full_text"],
        ["search", "create-next-app ALERT"], ["describe", "msg_1"], ["describe", summary], ["describe", "mem_1"],
        ["expand", summary, "--include-messages"], ["context", SESSION], ["context", SESSION, "--budget", "100"],
        ["memory", "list"], ["memory", "show", "mem_1"], ["memory", "search", "ALERT"], ["memory", "stats"],
        ["compact", "--all", "--dry-run"], ["verify"], ["stats"], ["status"], ["doctor"], ["promote"],
        ["sensitive", "test", HOSTILE], ["export", "-o", "-"], ["tool", "lcm_describe", "msg_1"],
    ]


def _assert_terminal_safe(data: bytes, what: str) -> None:
    text = data.decode("utf-8")  # strict: lone surrogates would not even encode
    raw = sorted({f"U+{ord(c):04X}" for c in text if c in FORBIDDEN})
    assert not raw, f"{what}: raw {', '.join(raw)} reached the terminal"
    assert b"\x1b" not in data and b"\r" not in data and b"\x08" not in data


def test_no_text_command_prints_a_control_character_raw(env: dict[str, str]) -> None:
    commands = _commands(env)
    if "sessions" in _run(env, "--help").stdout.decode():
        commands.append(["sessions"])
    for args in commands:
        done = _run(env, *args)
        assert done.returncode in (0, 1), (args, done.stderr.decode())
        assert done.stdout, args
        _assert_terminal_safe(done.stdout, " ".join(args[:2]))
        _assert_terminal_safe(done.stderr, " ".join(args[:2]) + " (stderr)")


def test_text_output_shows_the_escapes_visibly(env: dict[str, str]) -> None:
    out = _run(env, "describe", "msg_1").stdout.decode()
    assert terminal_safe(PROMPT) in out
    assert "\\u001b[31mALERT\\u001b[0m" in out and "\\u009b2J" in out and "\\u202eevil" in out
    status = _run(env, "status").stdout.decode()
    assert "/work/proj\\u001b[2Jcleared" in status


def test_json_keeps_the_exact_text(env: dict[str, str]) -> None:
    def json_of(*args: str) -> object:
        done = _run(env, *args)
        _assert_terminal_safe(done.stdout, " ".join(args))
        return json.loads(done.stdout)

    assert json_of("describe", "msg_1", "--json")["content"] == PROMPT  # type: ignore[index]
    assert json_of("memory", "show", "mem_1", "--json")["content"] == PROMPT  # type: ignore[index]
    hits = json_of("grep", "ALERT", "--scope", "messages", "--json")["groups"]  # type: ignore[index]
    assert any(HOSTILE in h["snippet"] for g in hits for h in g["hits"])
    nodes = json_of("expand", _summary_id(env), "--include-messages", "--json")["nodes"]  # type: ignore[index]
    assert any(HOSTILE in n["content"] for n in nodes if n["kind"] == "message")
    context = json.dumps(json_of("context", SESSION, "--json"), ensure_ascii=False)
    assert json.dumps(HOSTILE, ensure_ascii=False)[1:-1] in context
    assert ROOT in {p["root"] for p in json_of("stats", "--json")["projects"]}  # type: ignore[index]
    exported = _run(env, "export", "-o", "-").stdout.decode().splitlines()
    assert any(json.loads(line).get("content") == PROMPT for line in exported)


def test_the_stream_escapes_text_keeps_json_documents_and_passes_what_the_command_builds() -> None:
    import io

    from lcm_framework.cli.output import TerminalSafeStream

    raw = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    stream = TerminalSafeStream(raw)
    document = json.dumps({"text": HOSTILE, "lone": "\ud800"}, ensure_ascii=False)
    stream.write(document + "\n")
    stream.write_trusted("\x1b[1m")  # a colour code the command itself builds
    stream.write("bold\r\n")
    data = raw.buffer.getvalue()
    first, rest = data.split(b"\n", 1)
    _assert_terminal_safe(first, "a JSON document")
    assert json.loads(first) == {"text": HOSTILE, "lone": "\ud800"}
    assert rest == b"\x1b[1mbold\\u000d\n"
    assert stream.buffer is raw.buffer

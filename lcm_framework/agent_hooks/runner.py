"""``lcm hook EVENT``: forward one agent hook event to the daemon; never block or break the agent.

Always exits 0. Warnings go to stderr, one line each, never a traceback. The
daemon call has a total time budget, and the daemon proves it holds this
home's token before the hook sends anything (``daemon_client``); when the
daemon (or its storage) is unavailable, or something else holds its port, the event is captured
in the local outbox, the daemon is started in the background (unless
``daemon.autostart = false``) and drains the outbox when it is up.
Re-delivery is safe: ingest is idempotent.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from ..daemon_client.client import DaemonClient, DaemonRequestError, DaemonUnavailable
from .events import PROMPT, SESSION_START, action_of
from .payload import AGENT_NAME, MAX_STDIN_BYTES, HookInput, PayloadError, parse
from .settings import DEFAULT_AUTOSTART, DEFAULT_PORT, HookSettings, hook_settings

if TYPE_CHECKING:
    from ..agents.contracts import HookProtocol

BUDGET_S = 2.0
STDIN_WAIT_S = 2.0
SESSION_START_BUDGET_S = 4.0
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


USAGE = "usage: lcm hook EVENT [--agent NAME] [--protocol MODULE] [--timeout SECONDS] [--flat-context]"
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class HookArgs:
    """``lcm hook``'s arguments (a plain class: the hook runs on every turn)."""

    __slots__ = ("agent", "event", "flat", "protocol", "timeout_s")

    def __init__(self, event: str, agent: str | None = None, timeout_s: float | None = None, flat: bool = False,
                 protocol: str | None = None) -> None:
        self.event = event
        self.agent = agent
        self.timeout_s = timeout_s
        self.flat = flat
        self.protocol = protocol


def main(argv: Sequence[str], *, stdin: BinaryIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Parse ``EVENT [--agent A] [--protocol M] [--timeout S] [--flat-context]`` by hand (argparse would import
    shutil on this hot path)."""
    err = stderr or sys.stderr
    try:
        args = parse_args(argv)
    except ValueError as exc:
        _warn(err, f"{exc}; {USAGE}")
        return 0
    raw = stdin.read() if stdin is not None else read_stdin(err)
    return run(args, raw, out=stdout or sys.stdout, err=err)


def read_stdin(err: TextIO, *, limit: int = MAX_STDIN_BYTES, wait_s: float = STDIN_WAIT_S) -> bytes:
    """Read stdin until EOF, at most ``limit + 1`` bytes and ``wait_s`` seconds (an agent that keeps
    the pipe open must not hang the hook)."""
    import select
    import time

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + wait_s
    while size <= limit:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            _warn(err, f"stdin not closed within {wait_s:g} s; using what arrived")
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def agent_name(value: str) -> str:
    if not AGENT_NAME.fullmatch(value):
        raise ValueError("--agent must be an agent name (lower-case letters, digits, - and _)")
    return value


def protocol_module(value: str) -> str:
    if not MODULE_NAME.fullmatch(value):
        raise ValueError("--protocol must be a Python module name")
    return value


def timeout_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError("--timeout must be a number of seconds") from None
    if not 0 < seconds <= 600:
        raise ValueError("--timeout must be between 0 and 600 seconds")
    return seconds


OPTIONS: dict[str, tuple[str, str, Any]] = {
    "--agent": ("agent", "NAME", agent_name),
    "--protocol": ("protocol", "MODULE", protocol_module),
    "--timeout": ("timeout_s", "SECONDS", timeout_seconds),
}
"""``lcm hook``'s valued options, described once: (``HookArgs`` field, metavar, check). ``parse_args`` reads
them on the hot path; ``cli/cmd_hook.py`` gives argparse the same ones for ``--help`` and ``lcm --project X
hook``; ``--flat-context`` is the one flag."""
FLAG = "--flat-context"


def parse_args(argv: Sequence[str]) -> HookArgs:
    """``EVENT``, the agent (None when the command names none), its protocol module, the timeout and
    ``--flat-context``."""
    args = list(argv)
    values: dict[str, Any] = {}
    flat = False
    positional: list[str] = []
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if arg == FLAG:
            flat = True
        elif name in OPTIONS:
            if not eq:
                if not args:
                    raise ValueError(f"{name} needs a value")
                value = args.pop(0)
            field, _, check = OPTIONS[name]
            values[field] = check(value)
        elif arg.startswith("-"):
            raise ValueError(f"unknown option {arg}")
        else:
            positional.append(arg)
    if len(positional) != 1:
        raise ValueError("expected exactly one EVENT")
    return HookArgs(positional[0], flat=flat, **values)


def run(args: HookArgs, raw: bytes, *, out: TextIO, err: TextIO, env: Mapping[str, str] | None = None) -> int:
    """Handle one hook event; returns 0 whatever happens (an unexpected error is one warning line)."""
    try:
        _run(args, raw, out=out, err=err, env=env)
    except Exception as exc:  # the promise to the agent: exit 0, no traceback
        _warn(err, f"{args.event}: hook failed ({type(exc).__name__}: {str(exc)[:200]})")
    return 0


def load_protocol(module: str) -> HookProtocol:
    """The ``PROTOCOL`` of an agent plugin's hook protocol module (imported alone: no plugin is loaded)."""
    import importlib

    found: HookProtocol = importlib.import_module(module).PROTOCOL
    return found


class _Answer:
    """How this hook call prints context: through the agent's protocol, else LCM's own JSON."""

    __slots__ = ("flat", "protocol")

    def __init__(self, protocol: HookProtocol | None, flat: bool) -> None:
        self.protocol = protocol
        self.flat = flat

    def text(self, event: str, context: str) -> str:
        if self.protocol is not None:
            line = self.protocol.answer(event, context)
            return line if line.endswith("\n") else line + "\n"
        document = {"additionalContext": context} if self.flat else \
            {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
        return json.dumps(document) + "\n"


def _run(args: HookArgs, raw: bytes, *, out: TextIO, err: TextIO, env: Mapping[str, str] | None) -> None:
    event = args.event
    protocol = None
    if args.protocol is not None:
        try:
            protocol = load_protocol(args.protocol)
        except Exception as exc:  # a missing or broken plugin: LCM's own hook JSON, and a warning
            _warn(err, f"{event}: hook protocol {args.protocol} unusable ({type(exc).__name__}: "
                       f"{str(exc)[:200]}); reading LCM's own hook JSON")
    answer = _Answer(protocol, args.flat)
    try:
        hook = parse(raw, event=event, agent=args.agent, protocol=protocol)
    except PayloadError as exc:
        _warn(err, f"ignored {event} hook input: {exc}")
        return
    for note in hook.notes:
        _warn(err, f"{hook.event}: {note}")
    if not (hook.session_id or hook.transcript_path):
        _warn(err, f"{hook.event} hook input names no session and no transcript: nothing to do")
        return
    try:
        settings = load_settings(hook, env)
    except Exception as exc:  # a broken config must not break the agent
        _warn(err, f"configuration unusable ({exc}); using defaults")
        settings = default_settings(hook, env)
    payload = hook.forward(settings.project)
    if "tool_facts" in payload:  # a passive event: durable in the outbox at once, promoted by the daemon
        _capture(settings, hook, payload, err)
        return
    budget = args.timeout_s or (SESSION_START_BUDGET_S if hook.event == SESSION_START else BUDGET_S)
    client = DaemonClient.for_home(settings.home, settings.port, timeout_s=budget)
    body: dict[str, Any] = {"event": hook.event, "payload": payload}
    if hook.event == PROMPT and hook.prompt:
        body["prompt"] = hook.prompt
    try:
        reply = client.post("/hook", body)
    except DaemonUnavailable as exc:
        _fallback(settings, hook, payload, err, reason=str(exc), start=True)
        _restore_locally(settings, hook, out, err, env, answer)
        return
    except DaemonRequestError as exc:
        if exc.status in RETRYABLE_STATUS:
            _fallback(settings, hook, payload, err, reason=str(exc), start=False)
            _restore_locally(settings, hook, out, err, env, answer)
        else:
            _warn(err, f"{hook.event}: {exc}")
        return
    if action_of(hook.event).answers:
        emit_context(reply, out, err, hook.event, answer)


def emit_context(reply: Mapping[str, Any], out: TextIO, err: TextIO, event: str, answer: _Answer) -> None:
    """Print the restored context (SessionStart) or the prompt's recall (UserPromptSubmit) the way the agent
    reads hook output (its protocol's ``answer``; without one LCM's ``hookSpecificOutput.additionalContext``
    JSON, or ``{"additionalContext": ...}`` with ``--flat-context``); nothing when there is nothing to add.
    An output pipe the agent already closed costs a warning, not a traceback."""
    text = str((reply.get("restore") or reply.get("recall") or {}).get("context") or "")
    if not text:
        return
    line = answer.text(event, text)
    try:
        out.write(line)
        out.flush()
    except (OSError, ValueError):
        _discard_output(out)
        _warn(err, f"{event}: the agent closed the hook's output early; its context was not delivered")


def _discard_output(out: TextIO) -> None:
    """Point ``out``'s descriptor at /dev/null, so the flush at exit finds no broken pipe either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def load_settings(hook: HookInput, env: Mapping[str, str] | None) -> HookSettings:
    cwd = Path(hook.cwd) if hook.cwd and Path(hook.cwd).is_absolute() else None
    return hook_settings(cwd, os.environ if env is None else env)


def default_settings(hook: HookInput, env: Mapping[str, str] | None) -> HookSettings:
    from ..paths import find_project_root, lcm_home

    cwd = Path(hook.cwd) if hook.cwd and Path(hook.cwd).is_absolute() else None
    return HookSettings(lcm_home(os.environ if env is None else env), DEFAULT_PORT, DEFAULT_AUTOSTART,
                        find_project_root(cwd) if cwd is not None else None)


def _fallback(settings: HookSettings, hook: HookInput, payload: dict[str, Any], err: TextIO, *,
              reason: str, start: bool) -> None:
    from ..outbox import Outbox, OutboxError, outbox_path

    try:
        with Outbox(outbox_path(settings.home)) as box:
            box.capture(hook.event, payload)
        _warn(err, f"{hook.event}: {reason}; event kept in the outbox for the daemon to replay")
    except OutboxError as exc:
        _warn(err, f"{hook.event}: {reason}; and the outbox failed too: {exc}")
    if start and settings.autostart:
        from ..daemon_client.lifecycle import spawn_throttled

        try:
            spawn_throttled(settings.home, settings.port)
        except OSError as exc:
            _warn(err, f"could not start the daemon: {exc}")


def _capture(settings: HookSettings, hook: HookInput, payload: dict[str, Any], err: TextIO) -> None:
    from ..outbox import Outbox, OutboxError, outbox_path

    try:
        with Outbox(outbox_path(settings.home)) as box:
            box.capture(hook.event, payload)
    except OutboxError as exc:
        _warn(err, f"{hook.event}: the outbox refused the event: {exc}")


def _restore_locally(settings: HookSettings, hook: HookInput, out: TextIO, err: TextIO,
                     env: Mapping[str, str] | None, answer: _Answer) -> None:
    """SessionStart with the daemon unavailable: print the context read directly from storage."""
    if action_of(hook.event).action != "restore" or settings.project is None:
        return
    try:
        from .local_restore import restored_context

        source = hook.extra.get("source")
        text = restored_context(settings.project, hook.session_id, env, source if isinstance(source, str) else None)
    except Exception as exc:  # storage down too: the agent starts without restored context
        _warn(err, f"SessionStart: no restored context ({type(exc).__name__}: {exc})")
        return
    emit_context({"restore": {"context": text}}, out, err, hook.event, answer)


def _warn(err: TextIO, message: str) -> None:
    try:
        err.write(f"lcm: warning: {message}\n")
        err.flush()
    except (OSError, ValueError):
        pass

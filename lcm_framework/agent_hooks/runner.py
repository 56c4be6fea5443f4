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
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ..daemon_client.client import DaemonClient, DaemonRequestError, DaemonUnavailable
from .payload import AGENT_NAME, MAX_STDIN_BYTES, HookInput, PayloadError, parse
from .settings import DEFAULT_AUTOSTART, DEFAULT_PORT, HookSettings, hook_settings

BUDGET_S = 2.0
STDIN_WAIT_S = 2.0
SESSION_START_BUDGET_S = 4.0
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


USAGE = "usage: lcm hook EVENT [--agent NAME] [--timeout SECONDS] [--flat-context]"


def main(argv: Sequence[str], *, stdin: BinaryIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Parse ``EVENT [--agent A] [--timeout S] [--flat-context]`` by hand (argparse would import shutil on this
    hot path)."""
    err = stderr or sys.stderr
    try:
        event, agent, timeout_s, flat = parse_args(argv)
    except ValueError as exc:
        _warn(err, f"{exc}; {USAGE}")
        return 0
    raw = stdin.read() if stdin is not None else read_stdin(err)
    return run(event, agent, raw, timeout_s=timeout_s, out=stdout or sys.stdout, err=err, flat=flat)


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


def parse_args(argv: Sequence[str]) -> tuple[str, str | None, float | None, bool]:
    """``EVENT``, the agent (None when the command names none), the timeout and ``--flat-context``."""
    args = list(argv)
    agent: str | None = None
    timeout_s: float | None = None
    flat = False
    positional: list[str] = []
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        if arg == "--flat-context":
            flat = True
        elif name in ("--agent", "--timeout"):
            if not eq:
                if not args:
                    raise ValueError(f"{name} needs a value")
                value = args.pop(0)
            if name == "--agent":
                if not AGENT_NAME.fullmatch(value):
                    raise ValueError("--agent must be an agent name (lower-case letters, digits, - and _)")
                agent = value
            else:
                try:
                    timeout_s = float(value)
                except ValueError:
                    raise ValueError("--timeout must be a number of seconds") from None
                if not 0 < timeout_s <= 600:
                    raise ValueError("--timeout must be between 0 and 600 seconds")
        elif arg.startswith("-"):
            raise ValueError(f"unknown option {arg}")
        else:
            positional.append(arg)
    if len(positional) != 1:
        raise ValueError("expected exactly one EVENT")
    return positional[0], agent, timeout_s, flat


def run(event: str, agent: str | None, raw: bytes, *, timeout_s: float | None = None, out: TextIO, err: TextIO,
        env: Mapping[str, str] | None = None, flat: bool = False) -> int:
    """Handle one hook event; returns 0 whatever happens (an unexpected error is one warning line). ``flat``:
    print the context as a top-level ``additionalContext`` (see ``emit_context``)."""
    try:
        _run(event, agent, raw, timeout_s=timeout_s, out=out, err=err, env=env, flat=flat)
    except Exception as exc:  # the promise to the agent: exit 0, no traceback
        _warn(err, f"{event}: hook failed ({type(exc).__name__}: {str(exc)[:200]})")
    return 0


def _run(event: str, agent: str | None, raw: bytes, *, timeout_s: float | None, out: TextIO, err: TextIO,
         env: Mapping[str, str] | None, flat: bool) -> None:
    try:
        hook = parse(raw, event=event, agent=agent)
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
    budget = timeout_s or (SESSION_START_BUDGET_S if hook.event == "SessionStart" else BUDGET_S)
    client = DaemonClient.for_home(settings.home, settings.port, timeout_s=budget)
    body: dict[str, Any] = {"event": hook.event, "payload": payload}
    if hook.event == "UserPromptSubmit" and hook.prompt:
        body["prompt"] = hook.prompt
    try:
        answer = client.post("/hook", body)
    except DaemonUnavailable as exc:
        _fallback(settings, hook, payload, err, reason=str(exc), start=True)
        _restore_locally(settings, hook, out, err, env, flat)
        return
    except DaemonRequestError as exc:
        if exc.status in RETRYABLE_STATUS:
            _fallback(settings, hook, payload, err, reason=str(exc), start=False)
            _restore_locally(settings, hook, out, err, env, flat)
        else:
            _warn(err, f"{hook.event}: {exc}")
        return
    if hook.event in ("SessionStart", "UserPromptSubmit"):
        emit_context(answer, out, err, hook.event, flat=flat)


def emit_context(answer: Mapping[str, Any], out: TextIO, err: TextIO, event: str = "SessionStart", *,
                 flat: bool = False) -> None:
    """Print the restored context (SessionStart) or the prompt's recall (UserPromptSubmit) the way agents
    inject hook output (``hookSpecificOutput.additionalContext`` JSON, or ``{"additionalContext": ...}`` when
    ``flat``, for agents that read it at the top level); nothing when there is nothing to add.
    An output pipe the agent already closed costs a warning, not a traceback."""
    text = str((answer.get("restore") or answer.get("recall") or {}).get("context") or "")
    if not text:
        return
    document = {"additionalContext": text} if flat else \
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    line = json.dumps(document) + "\n"
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
                     env: Mapping[str, str] | None, flat: bool) -> None:
    """SessionStart with the daemon unavailable: print the context read directly from storage."""
    if hook.event != "SessionStart" or settings.project is None:
        return
    try:
        from .local_restore import restored_context

        source = hook.extra.get("source")
        text = restored_context(settings.project, hook.session_id, env, source if isinstance(source, str) else None)
    except Exception as exc:  # storage down too: the agent starts without restored context
        _warn(err, f"SessionStart: no restored context ({type(exc).__name__}: {exc})")
        return
    emit_context({"restore": {"context": text}}, out, err, flat=flat)


def _warn(err: TextIO, message: str) -> None:
    try:
        err.write(f"lcm: warning: {message}\n")
        err.flush()
    except (OSError, ValueError):
        pass

"""Entry point of ``lcm``: parse flags, resolve configuration, dispatch to a command plugin."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import LcmError

if TYPE_CHECKING:
    from ..kernel.extensions import CommandSpec
    from ..kernel.plugins import Plugins

DESCRIPTION = """\
LCM keeps every message of your coding agents' sessions, compacts old
turns into a DAG of summaries, and lets you (and your agent) search and expand
any summary back to the exact original. Secrets are scrubbed before storage.

Typical first run:
  lcm install           add LCM's hooks and MCP server to your agents
  lcm import            import the sessions your agents already wrote
  lcm compact --all     summarize old turns (offline by default)
  lcm grep "error"      find anything again; lcm expand ID recovers it verbatim
"""


_VALUED_GLOBALS = frozenset({"--project", "-c", "--set"})


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", type=Path, help="project root (default: found from the current directory)")
    parser.add_argument(
        "-c",
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a configuration key for this run (highest precedence)",
    )


def build_parser(commands: Mapping[str, CommandSpec], plugins: Plugins,
                 only: str | None = None) -> argparse.ArgumentParser:
    """The ``lcm`` parser. With ``only``, just that command's options are configured (start-up speed):
    the others are still listed by ``--help``."""
    parser = argparse.ArgumentParser(
        prog="lcm", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"lcm {__version__}")
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in sorted(commands):
        spec = commands[name]
        cmd = sub.add_parser(
            name,
            help=spec.help,
            description=_described(spec.help, spec.description),
            aliases=list(spec.aliases),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if only is None or only == name:
            spec.configure(cmd, plugins)
            _describe_actions(cmd)
        cmd.set_defaults(_spec=spec)
    return parser


def _described(summary: str, details: str | None) -> str:
    """What ``--help`` opens with: the one-line summary as a sentence, then the details."""
    first = summary[:1].upper() + summary[1:].rstrip(".") + "."
    same = details is not None and details.rstrip(".").lower() == summary.rstrip(".").lower()
    return f"{first}\n\n{details}" if details and not same else first


def _describe_actions(parser: argparse.ArgumentParser) -> None:
    """Each subcommand (``lcm config set``, ``lcm daemon stop`` ...) opens its ``--help`` with its one-line
    summary too, before any description of its own."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, child in action.choices.items():
                if summaries.get(name):
                    child.description = _described(summaries[name], child.description)
                _describe_actions(child)


def _command_word(argv: Sequence[str]) -> str | None:
    """The first word after the global options."""
    tokens = iter(argv)
    for token in tokens:
        if token in _VALUED_GLOBALS:
            next(tokens, None)  # the option's value
        elif not token.startswith("-"):
            return token
    return None


def selected_command(argv: Sequence[str], commands: Mapping[str, CommandSpec]) -> str | None:
    """The command named on the command line (aliases resolved): the first word after the global options."""
    word = _command_word(argv)
    for name, spec in commands.items():
        if word == name or word in spec.aliases:
            return name
    return None


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["hook"] and not {"-h", "--help"} & set(raw):
        # Agent hooks run on every turn: skip plugin loading (see lcm_framework/agent_hooks).
        from ..agent_hooks.runner import main as hook_main

        return hook_main(raw[1:])
    if _command_word(raw) == "mcp" and not {"-h", "--help", "--list"} & set(raw):
        # Agents wait for the MCP server at every session start: answer before loading plugins. The
        # options are parsed by the same definitions as below, without the plugins the tools' list needs.
        from ..mcp_server import main as mcp_main
        from .mcp_options import options

        parser = argparse.ArgumentParser(prog="lcm")
        _global_options(parser)
        options(parser.add_subparsers(dest="command").add_parser("mcp"))
        args = parser.parse_args(raw)
        return mcp_main(project=args.project, overrides=args.overrides)
    from ..kernel.plugins import build_plugins

    try:
        plugins = build_plugins()
        commands = plugins.commands()
    except LcmError as exc:
        print(f"lcm: error: {exc}", file=sys.stderr)
        return exc.exit_code
    # Only the chosen command's options are built; with none chosen (``lcm --help``) none are.
    parser = build_parser(commands, plugins, only=selected_command(raw, commands) or "")
    args = parser.parse_args(raw)
    spec = getattr(args, "_spec", None)
    if spec is None:
        parser.print_help()
        return 0

    from ..app import App
    from ..config import load_config, parse_overrides
    from .output import safe_stdout, terminal_safe

    app: App | None = None
    try:
        config = load_config(project=args.project, overrides=parse_overrides(args.overrides), plugins=plugins,
                             repairing=spec.repairs_config)
        for problem in config.problems:
            print(f"lcm: warning: {terminal_safe(problem)} (left at its default until repaired)", file=sys.stderr)
        app = App(config, plugins)
        with safe_stdout():  # stored text is untrusted: no command prints a control character raw
            return int(spec.run(args, app) or 0)
    except LcmError as exc:
        print(f"lcm: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("lcm: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if app is not None:
            app.close()


if __name__ == "__main__":
    raise SystemExit(main())

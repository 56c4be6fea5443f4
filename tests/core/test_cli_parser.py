"""The top-level parser configures only the command being run, and finds it past the global options."""

from __future__ import annotations

import argparse

from lcm_framework.cli.main import build_parser, selected_command
from lcm_framework.extensions import CommandSpec

configured: list[str] = []


def _spec(name: str, aliases: tuple[str, ...] = ()) -> CommandSpec:
    def configure(parser: argparse.ArgumentParser) -> None:
        configured.append(name)
        parser.add_argument("--flag", action="store_true")

    return CommandSpec(name=name, help=f"{name} help", configure=configure, run=lambda a, b: 0, aliases=aliases)


COMMANDS = {"grep": _spec("grep"), "import": _spec("import", ("imp",))}


def test_selected_command_skips_global_options_and_resolves_aliases() -> None:
    assert selected_command(["--project", "grep", "import", "--flag"], COMMANDS) == "import"
    assert selected_command(["-c", "daemon.port=1", "imp"], COMMANDS) == "import"
    assert selected_command(["--help"], COMMANDS) is None
    assert selected_command(["nosuch"], COMMANDS) is None
    assert selected_command(["grep", "x", "--project"], COMMANDS) == "grep"  # a command's own --project


def test_only_the_chosen_command_is_configured_but_all_are_listed() -> None:
    configured.clear()
    parser = build_parser(COMMANDS, only="grep")
    assert configured == ["grep"]
    assert parser.parse_args(["grep", "--flag"]).flag is True
    assert "import help" in parser.format_help()
    configured.clear()
    build_parser(COMMANDS, only="")
    assert configured == []

"""The top-level parser configures only the command being run, and finds it past the global options."""

from __future__ import annotations

import argparse

from lcm_framework.cli.main import build_parser, selected_command
from lcm_framework.kernel.extensions import CommandSpec
from lcm_framework.kernel.plugins import Plugins, build_plugins

configured: list[str] = []


def _spec(name: str, aliases: tuple[str, ...] = ()) -> CommandSpec:
    def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
        configured.append(name)
        parser.add_argument("--flag", action="store_true")

    return CommandSpec(name=name, help=f"{name} help", configure=configure, run=lambda a, b: 0, aliases=aliases)


PLUGINS: Plugins = build_plugins()
COMMANDS = {"grep": _spec("grep"), "import": _spec("import", ("imp",))}


def test_selected_command_skips_global_options_and_resolves_aliases() -> None:
    assert selected_command(["--project", "grep", "import", "--flag"], COMMANDS) == "import"
    assert selected_command(["-c", "daemon.port=1", "imp"], COMMANDS) == "import"
    assert selected_command(["--help"], COMMANDS) is None
    assert selected_command(["nosuch"], COMMANDS) is None
    assert selected_command(["grep", "x", "--project"], COMMANDS) == "grep"  # a command's own --project


def test_only_the_chosen_command_is_configured_but_all_are_listed() -> None:
    configured.clear()
    parser = build_parser(COMMANDS, PLUGINS, only="grep")
    assert configured == ["grep"]
    assert parser.parse_args(["grep", "--flag"]).flag is True
    assert "import help" in parser.format_help()
    configured.clear()
    build_parser(COMMANDS, PLUGINS, only="")
    assert configured == []


def test_an_option_that_turns_a_default_true_argument_off_says_so() -> None:
    from lcm_framework.kernel.arguments import add_options
    from lcm_framework.kernel.extensions import Argument

    parser = argparse.ArgumentParser()
    add_options(parser, [Argument("include_runs", bool, "Also search the runs.", default=True,
                                  off_help="Leave the runs out."),
                         Argument("verbose", bool, "Say more.", default=False)])
    helps = {action.option_strings[0]: action.help for action in parser._actions if action.option_strings}
    assert helps["--no-include-runs"] == "Leave the runs out."  # not "Also search the runs."
    assert helps["--verbose"] == "Say more."
    assert parser.parse_args(["--no-include-runs"]).include_runs is False

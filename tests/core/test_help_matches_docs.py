"""Every command's ``--help`` against its parser and ``docs/commands.md``: each command and subcommand says what
it does, each option is documented under it, each documented option exists, ``--json`` reads the same everywhere.

The reference is parsed this way: a heading ``## `lcm COMMAND` `` (``### `lcm COMMAND SUB` ``) opens a command's
section; the first cell of each table row starting ``| `-`` names that command's options (every ``-x`` /
``--name`` in it)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.cli.main import build_parser
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.output import JSON_HELP

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
HEADING = re.compile(r"^#{2,3} `lcm(?P<path>(?: [a-z][a-z0-9-]*)*)`", re.M)
OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][a-zA-Z0-9-]*)")
BUILTIN = "lcm-framework"  # the distribution whose commands docs/ describes (a third party documents its own)


def builtin_commands() -> dict[str, object]:
    plugins = build_plugins()
    commands = plugins.commands()
    owners = plugins.provenance("command")
    return {name: spec for name, spec in commands.items() if plugins.infos[owners[name]].distribution == BUILTIN}


def subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(name, parser) of each subcommand of ``parser``, aliases left out."""
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                if id(child) not in seen:
                    seen.add(id(child))
                    yield name, child


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(``lcm ...`` path, parser) of ``lcm`` itself, every built-in command and every subcommand."""
    stack = [("", build_parser(builtin_commands(), build_plugins()))]  # type: ignore[arg-type]
    while stack:
        path, parser = stack.pop()
        yield path, parser
        stack.extend((f"{path} {name}", child) for name, child in subcommands(parser))


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


def documented() -> dict[str, set[str]]:
    """Options by ``lcm ...`` path, as the reference lists them."""
    text = REFERENCE.read_text(encoding="utf-8")
    sections: dict[str, set[str]] = {}
    marks = list(HEADING.finditer(text))
    for n, mark in enumerate(marks):
        body = text[mark.end():marks[n + 1].start() if n + 1 < len(marks) else len(text)]
        rows = [line.split("|")[1] for line in body.splitlines() if line.startswith("| `-")]
        assert mark["path"] not in sections, f"lcm{mark['path']} has two sections in {REFERENCE.name}"
        sections[mark["path"]] = {flag for cell in rows for flag in OPTION.findall(cell)}
    return sections


PARSERS = dict(parsers())


def test_the_walk_sees_the_commands_and_their_subcommands() -> None:
    assert {" grep", " config set", " memory feedback", " daemon stop", " sensitive scan", " postgres migrate"} \
        <= set(PARSERS)


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_every_command_says_what_it_does(path: str) -> None:
    description = (PARSERS[path].description or "").strip()
    assert len(description) > 20, f"`lcm{path} --help` has no description"


@pytest.mark.parametrize("path", sorted(PARSERS))
def test_every_option_is_documented_and_every_documented_option_exists(path: str) -> None:
    docs = documented()
    assert path in docs, f"docs/commands.md has no section `lcm{path}`"
    real = options(PARSERS[path])
    assert not real - docs[path], f"lcm{path}: options missing from docs/commands.md: {sorted(real - docs[path])}"
    assert not docs[path] - real, f"lcm{path}: docs/commands.md documents options it lacks: {sorted(docs[path] - real)}"


def test_the_reference_describes_no_command_that_does_not_exist() -> None:
    assert not set(documented()) - set(PARSERS)


def test_json_reads_the_same_everywhere() -> None:
    helps = {f"lcm{path}": action.help for path, parser in PARSERS.items() for action in parser._actions
             if "--json" in action.option_strings}
    assert len(helps) > 20
    assert {path: text for path, text in helps.items() if text != JSON_HELP} == {}


def help_of(path: str) -> str:
    return " ".join(PARSERS[path].format_help().split())  # argparse's wrapping undone


def test_help_derives_tools_agents_and_events_from_the_registries() -> None:
    plugins = build_plugins()
    tools, agents = sorted(plugins.capabilities()), plugins.agents()
    assert f"tools served: {', '.join(tools)}" in help_of(" mcp")
    for name, agent in agents.items():
        events = ", ".join(e.event for e in agent.events)
        assert f"{name} ({agent.display_name}): {events}" in help_of(" install")
        assert all(e.event in help_of(" hook") for e in agent.events)
    hook_agent = next(a for a in PARSERS[" hook"]._actions if "--agent" in a.option_strings)
    assert sorted(hook_agent.choices or ()) == sorted(agents)


def test_uninstall_service_says_it_removes() -> None:
    service = {path: next(a.help for a in PARSERS[path]._actions if "--service" in a.option_strings)
               for path in (" install", " uninstall")}
    assert "write" in str(service[" install"]) and "remove" in str(service[" uninstall"])
    assert "write" not in str(service[" uninstall"]).split("wrote")[0]

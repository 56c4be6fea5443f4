"""A capability's arguments, described once (``extensions.Argument``), give its MCP schema, the checks every
caller (MCP, daemon, CLI) runs before the handler, and its CLI options."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import LcmError

if TYPE_CHECKING:
    from ..app import App
    from .extensions import Argument, Capability

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""What JSON's ``\\ud800`` escapes can put into a str that is not text: no storage or output encodes it."""
_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}


class ArgumentError(LcmError):
    """Arguments that do not fit a capability's description (a usage error: exit status 2, HTTP 400)."""

    exit_code = 2
    code = "invalid_arguments"


def json_schema(arguments: Sequence[Argument]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for arg in arguments:
        spec: dict[str, Any] = {"type": _JSON_TYPES[arg.kind], "description": arg.help}
        if arg.kind is list:
            spec["items"] = {"type": "string"}
        if arg.choices:
            spec["enum"] = list(arg.choices)
        if arg.minimum is not None:
            spec["minimum"] = arg.minimum
        if arg.maximum is not None:
            spec["maximum"] = arg.maximum
        if arg.default is not None:
            spec["default"] = arg.default
        properties[arg.name] = spec
    return {"type": "object", "properties": properties, "required": [a.name for a in arguments if a.required]}


def bind(arguments: Sequence[Argument], raw: Any) -> dict[str, Any]:
    """``raw`` checked against ``arguments`` and completed with their defaults (absent or null: the default;
    arguments without one are left out). ArgumentError names the first problem."""
    if not isinstance(raw, Mapping):
        raise ArgumentError("arguments must be an object")
    known = {a.name: a for a in arguments}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ArgumentError(f"unknown argument {unknown[0]!r} (allowed: {', '.join(known)})")
    out: dict[str, Any] = {}
    for arg in arguments:
        value = raw.get(arg.name)
        if value is None:
            if arg.required:
                raise ArgumentError(f"{arg.name} is required")
            if arg.default is not None:
                out[arg.name] = arg.default
            continue
        out[arg.name] = _checked(arg, value)
    return out


def _checked(arg: Argument, value: Any) -> Any:
    kind = arg.kind
    fits = (isinstance(value, int | float) and not isinstance(value, bool) if kind is float
            else isinstance(value, int) and not isinstance(value, bool) if kind is int
            else isinstance(value, list) and all(isinstance(v, str) for v in value) if kind is list
            else isinstance(value, kind))
    if not fits:
        raise ArgumentError(f"{arg.name} must be of type {_JSON_TYPES[kind]}")
    if any(_LONE_SURROGATE.search(text) for text in (value if kind is list else [value] if kind is str else [])):
        raise ArgumentError(f"{arg.name} must be Unicode text (it holds a lone surrogate such as \\ud800)")
    if kind is str and arg.required and not value.strip():
        raise ArgumentError(f"{arg.name} is required (non-empty text)")
    if arg.choices and value not in arg.choices:
        raise ArgumentError(f"{arg.name} must be one of {', '.join(arg.choices)}")
    if arg.minimum is not None and value < arg.minimum:
        raise ArgumentError(f"{arg.name} must be at least {arg.minimum:g}")
    if arg.maximum is not None and value > arg.maximum:
        raise ArgumentError(f"{arg.name} must be at most {arg.maximum:g}")
    return value


def call(app: App, capability: Capability, raw: Any) -> Any:
    """Run ``capability`` with ``raw`` arguments, checked and completed once, here, for every caller."""
    return capability.handler(app, bind(capability.arguments, raw))


def add_options(parser: argparse.ArgumentParser, arguments: Sequence[Argument],
                names: Iterable[str] | None = None) -> None:
    """Add ``arguments`` (or only those in ``names``) to ``parser``; ``options(namespace, ...)`` reads them back.

    A required text is a positional; a flag is ``--name`` (``--no-name`` when it defaults to true); others are
    ``--name VALUE`` (lists: repeat it). Values are checked by ``bind``, so bounds and defaults stay the
    description's.
    """
    wanted = None if names is None else set(names)
    for arg in arguments:
        if wanted is not None and arg.name not in wanted:
            continue
        dashed = arg.name.replace("_", "-")
        shown = f" (default {_shown(arg.default)})" if arg.default not in (None, False, True) else ""
        if arg.kind is bool:
            flag = arg.flag or (f"--no-{dashed}" if arg.default else f"--{dashed}")
            parser.add_argument(flag, dest=arg.name, action="store_false" if arg.default else "store_true",
                                default=None, help=(arg.off_help or arg.help) if arg.default else arg.help)
        elif arg.required and arg.kind is str:
            parser.add_argument(arg.name, metavar=arg.name.upper(), help=arg.help)
        else:
            parser.add_argument(arg.flag or f"--{dashed}", dest=arg.name, type=_PARSERS[arg.kind],
                                action="append" if arg.kind is list else "store", choices=arg.choices or None,
                                required=arg.required, metavar=None if arg.choices else arg.name.upper(),
                                help=arg.help + shown)


def options(namespace: argparse.Namespace, arguments: Sequence[Argument]) -> dict[str, Any]:
    """The values ``add_options`` parsed, ready for ``bind`` (unset options are left out)."""
    return {a.name: getattr(namespace, a.name) for a in arguments if getattr(namespace, a.name, None) is not None}


def _shown(value: Any) -> str:
    return ",".join(value) if isinstance(value, list) else str(value)


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


_PARSERS: dict[type, Any] = {str: str, int: _integer, float: _number, list: str}

"""The core ``lcm`` subcommands, registered through the command hook like any plugin's.

Every ``cmd_*`` module of this package defines one ``COMMAND``; the module is
imported here, but each command imports its heavy dependencies only when run.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from importlib import import_module

from ..kernel.extensions import CommandSpec
from ..kernel.hookspecs import hookimpl


@hookimpl
def lcm_register_commands(register: Callable[[CommandSpec], None]) -> None:
    for module in sorted(m.name for m in pkgutil.iter_modules(_path())):
        if module.startswith("cmd_"):
            register(import_module(f"{__package__}.{module}").COMMAND)


def _path() -> list[str]:
    from pathlib import Path

    return [str(Path(__file__).parent)]

"""The registered agent integrations, for the commands that take an agent name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent_hooks.payload import AGENT_NAME
from ..errors import LcmError, PluginError

if TYPE_CHECKING:
    from ..kernel.plugins import Plugins
    from .contracts import AgentIntegration


def registered(plugins: Plugins) -> dict[str, AgentIntegration]:
    """Every agent integration ``plugins`` register, by name, sorted."""
    found = dict(sorted(plugins.agents().items()))
    owners = plugins.provenance("agent")
    for name in found:
        if not AGENT_NAME.fullmatch(name):  # `lcm hook --agent` could not name it
            raise PluginError(f"agent {name!r} registered by {owners.get(name, '?')!r} is not a valid agent name "
                              "(lower-case letters, digits, - and _, at most 32)")
    return found


def integration(name: str, plugins: Plugins) -> AgentIntegration:
    """The integration called ``name``; an error listing the registered ones when there is none."""
    found = registered(plugins)
    if name not in found:
        raise LcmError(f"unknown agent {name!r} (choose from: {', '.join([*found, 'all'])})")
    return found[name]


def describe(agents: dict[str, AgentIntegration]) -> str:
    """``name (Display Name), ...`` for help texts."""
    return ", ".join(f"{name} ({agent.display_name})" for name, agent in agents.items()) or "none registered"

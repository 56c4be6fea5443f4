"""What every verb shares: a typed answer that knows its one JSON form, and requests built from a capability's
checked arguments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..kernel.extensions import Argument

R = TypeVar("R")


class Result:
    """A verb's answer. ``to_json()`` is the one JSON form every front door gives: what ``lcm VERB --json``
    prints, the MCP tool returns and the daemon route answers (a subclass shapes it when its fields are not
    that form)."""

    __slots__ = ()

    def to_json(self) -> Any:
        from ..jsonable import to_jsonable

        return to_jsonable(self)


def from_arguments(request: type[R], arguments: Sequence[Argument], raw: Mapping[str, Any], **extra: Any) -> R:
    """``request`` built from ``raw`` checked and completed against ``arguments`` (``capabilities.bind``: the
    checks and defaults of MCP, daemon and CLI), plus door-independent ``extra`` fields."""
    from ..kernel.arguments import bind

    return request(**bind(arguments, raw), **extra)

"""Every repository call of every backend goes through the rule its contract method declares, before the adapter.

A rule planted on each contract method (``@checks`` reads it at each call) must refuse that method's call on the
backend's project scope and inside its transactions, with arguments no adapter could take: only the core's
wrapper can have raised it.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from lcm_framework.errors import DataValidationError
from lcm_framework.storage import contracts
from lcm_framework.storage.call_rules import RULE_ATTRIBUTE, declared_rule
from lcm_framework.storage.checked import contract_methods
from lcm_framework.storage.contracts import ProjectStorage, Repositories
from lcm_framework.storage.validation import Validator


def _ruled() -> list[tuple[str, str, Callable[..., Any]]]:
    return [(domain, name, method) for domain, protocol in typing.get_type_hints(contracts.Repositories).items()
            for name, method in contract_methods(protocol).items() if declared_rule(method) is not None]


def _refuse(v: Validator, *args: Any, **kwargs: Any) -> None:
    raise v.invalid("planted rule", "planted")


def _call(repos: Repositories, domain: str, name: str, method: Callable[..., Any]) -> None:
    params = list(inspect.signature(method).parameters.values())[1:]
    args = [None for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    kwargs = {p.name: None for p in params if p.kind is p.KEYWORD_ONLY}
    getattr(getattr(repos, domain), name)(*args, **kwargs)


def test_every_call_with_arguments_runs_its_declared_rule_first(project: ProjectStorage,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ruled = _ruled()
    assert len(ruled) >= 70
    for _domain, _name, method in ruled:
        monkeypatch.setattr(method, RULE_ATTRIBUTE, _refuse)
    for domain, name, method in ruled:
        for run in (lambda f: f(project), project.transaction):
            with pytest.raises(DataValidationError) as info:
                run(lambda repos: _call(repos, domain, name, method))  # noqa: B023 (called at once)
            assert (info.value.code, info.value.domain, info.value.backend) == (
                "planted", domain, project.capabilities.backend), f"{domain}.{name}"

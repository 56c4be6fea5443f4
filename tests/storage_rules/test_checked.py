"""The core's validating wrapper: every contract method declares its rule, and bad input never reaches an adapter."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, Protocol

import pytest

from lcm_framework.errors import DataValidationError
from lcm_framework.storage import contracts
from lcm_framework.storage.call_rules import checks, declared_rule
from lcm_framework.storage.checked import (
    CheckedBackend,
    CheckedProjectStorage,
    _checked_class,
    contract_methods,
    storage_driver,
)
from lcm_framework.storage.contracts import Capabilities, CoordinationScope, FullTextTier
from lcm_framework.storage.models import Health, NewMessage, ProjectRef, Role
from lcm_framework.storage.validation import Validator


def _protocols() -> dict[str, type]:
    return typing.get_type_hints(contracts.Repositories)


def test_every_repository_method_with_arguments_declares_a_rule_with_its_signature() -> None:
    """mypy checks the same through ``checks``' ParamSpec; this also covers rules given as lambdas."""
    for domain, protocol in _protocols().items():
        for name, method in contract_methods(protocol).items():
            rule = declared_rule(method)
            if rule is None:
                assert list(inspect.signature(method).parameters) == ["self"], f"{domain}.{name} has arguments"
                continue
            wanted = [(p.name, p.kind, p.default) for p in list(inspect.signature(method).parameters.values())[1:]]
            got = [(p.name, p.kind, p.default) for p in list(inspect.signature(rule).parameters.values())[1:]]
            assert got == wanted, f"{domain}.{name}"


def test_a_method_with_arguments_and_no_rule_is_refused_when_the_wrapper_is_built() -> None:
    class Forgotten(Protocol):
        def fine(self) -> int: ...
        def unchecked(self, item_id: int) -> int: ...

    with pytest.raises(TypeError, match=r"Forgotten\.unchecked takes arguments but declares no rule"):
        _checked_class(Forgotten)


def test_the_wrapper_reaches_only_contract_methods_and_runs_their_rule() -> None:
    def positive(v: Validator, item_id: int) -> None:
        if item_id < 1:
            raise v.invalid("item_id must be positive")

    class Items(Protocol):
        @checks(positive)
        def get(self, item_id: int) -> int: ...
        def size(self) -> int: ...

    class Adapter:
        def get(self, item_id: int) -> int:
            return item_id * 10

        def size(self) -> int:
            return 3

        def internal(self) -> str:
            return "not in the contract"

    wrapped: Any = _checked_class(Items)(Adapter(), Validator("fake", "items", "p"))
    assert (wrapped.get(2), wrapped.size()) == (20, 3)
    with pytest.raises(DataValidationError):
        wrapped.get(0)
    with pytest.raises(AttributeError):
        wrapped.internal()


class _Recorder:
    """Any method call is recorded and answered with ``"stored"``."""

    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self._calls = calls

    def __getattr__(self, name: str) -> Callable[..., str]:
        def call(*args: Any, **kwargs: Any) -> str:
            self._calls.append((name, args))
            return "stored"
        return call


class _FakeStorage:
    project_id = "proj"
    capabilities = Capabilities("fake", True, True, False, True, FullTextTier.LIKE, CoordinationScope.LOCAL)

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        for domain in _protocols():
            setattr(self, domain, _Recorder(self.calls))

    def transaction(self, fn: Callable[[Any], Any]) -> Any:
        return fn(self)

    def close(self) -> None:
        self.calls.append(("close", ()))


class _FakeFactory:
    name = "fake"
    capabilities = _FakeStorage.capabilities

    def open_project(self, project: ProjectRef) -> _FakeStorage:
        return _FakeStorage()

    def list_projects(self) -> list[ProjectRef]:
        return []

    def health(self) -> Health:
        return Health("fake", ok=True, state="ok")

    def check_integrity(self) -> list[Health]:
        return []

    def close(self) -> None:
        pass


def test_bad_input_is_refused_before_the_adapter_is_called() -> None:
    fake = _FakeStorage()
    storage = CheckedProjectStorage(fake)  # type: ignore[arg-type]
    with pytest.raises(DataValidationError) as info:
        storage.conversations.append_messages(1, [NewMessage(Role.USER, "a\x00b", 1)])
    assert (info.value.backend, info.value.domain, info.value.project, info.value.code) == (
        "fake", "conversations", "proj", "nul_character")
    with pytest.raises(DataValidationError):
        storage.transaction(lambda repos: repos.summaries.get_summary("x\x00"))
    assert fake.calls == []


def test_good_input_reaches_the_adapter_unchanged() -> None:
    fake = _FakeStorage()
    storage = CheckedProjectStorage(fake)  # type: ignore[arg-type]
    message = NewMessage(Role.USER, "fine", 1)
    assert storage.conversations.append_messages(7, [message]) == "stored"
    assert storage.transaction(lambda repos: repos.redaction_admin.get_counts()) == "stored"
    storage.close()
    assert fake.calls == [("append_messages", (7, [message])), ("get_counts", ()), ("close", ())]


def test_the_backend_wrapper_opens_checked_scopes_and_exposes_its_driver() -> None:
    driver = _FakeFactory()
    backend = CheckedBackend(driver)  # type: ignore[arg-type]
    storage = backend.open_project(ProjectRef("proj", "/p"))
    assert isinstance(storage, CheckedProjectStorage)
    assert storage_driver(backend) is driver
    assert isinstance(storage_driver(storage), _FakeStorage)
    assert storage_driver(driver) is driver  # type: ignore[arg-type]
    with pytest.raises(DataValidationError):
        storage.native_transcripts.get_by_id(-1)

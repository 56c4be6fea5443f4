"""Backend harnesses for the backend-neutral conformance suite.

Each module in ``harnesses/`` exposes ``NAME`` and ``make_factory(tmp_path)``:
a context manager yielding a fresh ``StorageBackendFactory`` whose state
nothing else shares (own directory, own database or schema). Every test in
this package runs once per harness; a harness that cannot run raises
``HarnessUnavailable`` and the test is skipped, except under ``CI=true``
where that is a failure.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.storage.contracts import ProjectStorage, StorageBackendFactory
from lcm_framework.storage.models import ProjectRef
from tests.conftest import skip_or_fail

from . import harnesses
from .harnesses import HarnessUnavailable

HARNESSES = sorted(m.name for m in pkgutil.iter_modules(harnesses.__path__) if not m.name.startswith("_"))


@pytest.fixture(params=HARNESSES)
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StorageBackendFactory]:
    module = importlib.import_module(f"{harnesses.__name__}.{request.param}")
    try:
        cm = module.make_factory(tmp_path)
        made = cm.__enter__()
    except HarnessUnavailable as exc:
        skip_or_fail(f"backend harness {request.param!r} unavailable: {exc}")
    try:
        yield made
    finally:
        cm.__exit__(None, None, None)


def make_ref(name: str) -> ProjectRef:
    import hashlib

    return ProjectRef(project_id=hashlib.sha256(name.encode()).hexdigest(), root=f"/work/{name}")


@pytest.fixture
def project(factory: StorageBackendFactory) -> Iterator[ProjectStorage]:
    storage = factory.open_project(make_ref("alpha"))
    try:
        yield storage
    finally:
        storage.close()


@pytest.fixture
def other_project(factory: StorageBackendFactory) -> Iterator[ProjectStorage]:
    storage = factory.open_project(make_ref("beta"))
    try:
        yield storage
    finally:
        storage.close()

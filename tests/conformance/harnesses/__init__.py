"""One module per storage backend under test (see ``tests/conformance/conftest.py``)."""


class HarnessUnavailable(Exception):
    """The backend cannot be reached here (e.g. no PostgreSQL server)."""

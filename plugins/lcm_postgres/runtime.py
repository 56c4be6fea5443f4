"""One bounded psycopg pool per factory, and the executors repositories run on.

Every repository call runs ``with executor.cursor(domain) as cur:``: on the
pool executor that is one short transaction on a pooled connection; on a
transaction executor it is a savepoint inside the caller's transaction, so
each operation keeps its own rollback boundary. Driver errors are translated
at this boundary. A connection left in an uncertain state (interrupted
mid-query, broken) is closed so the pool discards it instead of reusing it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from lcm_framework.plugin_api import StorageClosedError, StorageError, StorageUnavailableError

from .errors import BACKEND, translate

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    from .settings import PgSettings


def _discard_if_uncertain(conn: psycopg.Connection[Any]) -> None:
    """Cancel what may still run on the server and close the connection (the pool then drops it)."""
    try:
        conn.cancel_safe(timeout=2.0)
    except Exception:
        pass
    conn.close()


def probe(settings: PgSettings) -> None:
    """Connect once, directly, so a down server or failed TLS verification is reported at once and by kind."""
    import psycopg

    try:
        psycopg.connect(**settings.connect_kwargs()).close()
    except psycopg.OperationalError as exc:
        text = str(exc).lower()
        if "certificate" in text or "ssl" in text or "host name" in text:
            raise StorageUnavailableError(
                "TLS verification of the PostgreSQL server failed (check postgresql.ca_file and the host name "
                "in postgresql.url)", backend=BACKEND, domain="runtime", code="tls_verify_failed") from None
        raise translate(exc, domain="runtime", project=None) from None
    except psycopg.Error as exc:
        raise translate(exc, domain="runtime", project=None) from None


class Executor(Protocol):
    project: str | None

    def cursor(self, domain: str) -> Any:
        """Context manager yielding a cursor inside a transaction (or savepoint)."""
        ...


class Runtime:
    """The factory's pool. ``connect()`` hands out one connection for a unit of work."""

    def __init__(self, settings: PgSettings) -> None:
        from psycopg_pool import ConnectionPool

        self.settings = settings
        probe(settings)
        self._pool: ConnectionPool[Any] | None = ConnectionPool(
            kwargs={**settings.connect_kwargs(), "autocommit": True},
            min_size=0,
            max_size=settings.pool_size,
            timeout=settings.acquire_timeout_s,
            max_idle=settings.idle_timeout_s,
            reconnect_timeout=settings.acquire_timeout_s,
            check=ConnectionPool.check_connection,
            name="lcm",
            open=True,
        )

    @property
    def pool(self) -> ConnectionPool[Any]:
        if self._pool is None:
            raise StorageClosedError("the PostgreSQL backend is closed", backend=BACKEND, domain="runtime",
                                     code="closed")
        return self._pool

    @contextmanager
    def connection(self, domain: str, project: str | None = None) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; driver errors become sanitized StorageErrors."""
        import psycopg

        try:
            with self.pool.connection() as conn:
                try:
                    yield conn
                except (psycopg.Error, StorageError, GeneratorExit):
                    raise
                except BaseException:
                    _discard_if_uncertain(conn)
                    raise
        except StorageError:
            raise
        except Exception as exc:
            if isinstance(exc, psycopg.Error) or type(exc).__module__.startswith("psycopg_pool"):
                raise translate(exc, domain=domain, project=project) from None
            raise

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(timeout=5.0)


class PoolExecutor:
    """Autocommit binding: each operation is its own short transaction on a pooled connection."""

    def __init__(self, runtime: Runtime, project: str | None) -> None:
        self.runtime = runtime
        self.project = project

    @contextmanager
    def cursor(self, domain: str) -> Iterator[psycopg.Cursor[Any]]:
        import psycopg

        with self.runtime.connection(domain, self.project) as conn:
            try:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                raise translate(exc, domain=domain, project=self.project) from None


class TransactionExecutor:
    """Binding to one caller transaction: each operation is a savepoint on its connection."""

    def __init__(self, conn: psycopg.Connection[Any], project: str | None) -> None:
        self.conn = conn
        self.project = project

    @contextmanager
    def cursor(self, domain: str) -> Iterator[psycopg.Cursor[Any]]:
        import psycopg

        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                yield cur
        except psycopg.Error as exc:
            raise translate(exc, domain=domain, project=self.project) from None

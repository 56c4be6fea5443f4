"""Safe SQLite files for a SQLite-based storage adapter: private creation, WAL, ``quick_check``.

``open_private`` refuses symlinks and non-regular files (``UnsafeDatabaseFile``); ``enable_wal`` switches a
connection to WAL, waiting for a concurrent opener's switch; ``CORRUPT_CODES`` are the SQLite error codes
that mean a damaged file.
"""

from ..sqlite_files import CORRUPT_CODES, UnsafeDatabaseFile, enable_wal, open_private, quick_check

__all__ = ["CORRUPT_CODES", "UnsafeDatabaseFile", "enable_wal", "open_private", "quick_check"]

"""Safe SQLite files for a SQLite-based storage adapter: private creation, WAL, ``quick_check``.

``open_private`` refuses symlinks and non-regular files (``UnsafeDatabaseFile``); ``CORRUPT_CODES`` are the
SQLite error codes that mean a damaged file.
"""

from ..sqlite_files import CORRUPT_CODES, UnsafeDatabaseFile, open_private, quick_check

__all__ = ["CORRUPT_CODES", "UnsafeDatabaseFile", "open_private", "quick_check"]

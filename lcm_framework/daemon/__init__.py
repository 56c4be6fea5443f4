"""The local LCM daemon: an authenticated HTTP service on 127.0.0.1 (Starlette + uvicorn).

``files`` and ``client`` are cheap to import (the hook path uses them);
``server``, ``routes`` and ``service`` pull in Starlette and storage.
"""

"""The daemon's and ``lcm ui``'s socket listens before its address is announced: a client that connects at
once (a browser opened on the printed URL, a test on a loaded machine) waits in the backlog instead of
being refused while the server's loop starts."""

from __future__ import annotations

import socket

import pytest

from lcm_framework.daemon.server import bind_loopback
from lcm_framework.errors import LcmError


def test_a_connection_before_any_server_runs_is_accepted_into_the_backlog() -> None:
    sock = bind_loopback(0)
    try:
        with socket.create_connection(("127.0.0.1", sock.getsockname()[1]), timeout=5) as client:
            client.sendall(b"GET / HTTP/1.0\r\n\r\n")
            accepted, _ = sock.accept()  # what the server's loop does once it runs
            with accepted:
                assert accepted.recv(64).startswith(b"GET / ")
    finally:
        sock.close()


def test_a_port_another_server_listens_on_is_a_clear_error() -> None:
    taken = bind_loopback(0)
    try:
        with pytest.raises(LcmError, match=f"cannot listen on 127.0.0.1:{taken.getsockname()[1]}"):
            bind_loopback(taken.getsockname()[1])
    finally:
        taken.close()

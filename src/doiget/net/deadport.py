"""A loopback port that refuses every connection: bound, so nothing else can listen
there, and never listening. The browser tier names it as the browser's proxy, so a
request that escaped doiget's interception has nowhere to go."""

from __future__ import annotations

import socket


class DeadPort:
    """Holds the port while open; :meth:`close` releases it."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    @property
    def proxy_url(self) -> str:
        """``http://127.0.0.1:PORT``, for a ``--proxy-server`` argument."""
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._socket.close()

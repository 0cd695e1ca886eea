"""What every process the server starts shares: it dies with the server."""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["die_with_server"]


def die_with_server(server: int) -> None:
    """In the child, before exec: SIGKILL when the server dies (Linux ``PR_SET_PDEATHSIG``),
    so a killed server leaves no job (and no clone holding a token) running that a restart
    would start again. A server that died before this line ran has already left: the child
    goes too."""
    if sys.platform != "linux":
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != server:
        os._exit(1)

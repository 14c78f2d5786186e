"""Sync calls into the async tools, for the frameworks' sync APIs (LangChain ``invoke``,
LlamaIndex ``call``, deepagents' ``read``/``write``…).

A ``BlockingRunner`` owns one event loop in one daemon thread (started on first use) and runs
every sync call of its adapter there, so the providers' loop-bound state (locks, limiters,
S3 clients) always lives on one loop, however many framework threads call at once. The thread
is a daemon: a process that ends without ``close()`` does not hang on it, and a write cut off
there leaves the file as it was (writes are atomic).

Pure plumbing on anyio's ``BlockingPortal``; no tool logic.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

__all__ = ("BlockingRunner",)

T = TypeVar("T")


class BlockingRunner:
    """Runs coroutine functions to completion from sync code, on one private event loop."""

    def __init__(self, name: str = "dsh-fs sync calls") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._thread: threading.Thread | None = None

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``await fn(*args)`` on the runner's loop; blocks until it is done.

        :raises RuntimeError: when called from a thread that is running an asyncio event loop (the
            caller would block its own loop: use the adapter's async API there)
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("a sync tool call was made on a running event loop; use the async API (ainvoke/acall) there")
        return self._started().call(fn, *args)

    def _started(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                ready = threading.Event()
                holder: list[BlockingPortal] = []

                async def serve() -> None:
                    async with BlockingPortal() as portal:
                        holder.append(portal)
                        ready.set()
                        await portal.sleep_until_stopped()

                self._thread = threading.Thread(target=anyio.run, args=(serve,), name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
                self._portal = holder[0]
            return self._portal

    def close(self) -> None:
        """Stop the loop (after the calls in flight finish) and join its thread; idempotent.
        A later ``run`` starts a new one."""
        with self._lock:
            portal, thread = self._portal, self._thread
            self._portal = self._thread = None
        if portal is not None:
            portal.call(portal.stop)
        if thread is not None:
            thread.join()

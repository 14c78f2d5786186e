"""A moto S3 server on a loopback port, for tests, benchmarks and CI.

The server is moto's own WSGI application (the S3 wire protocol, ``moto[server]``) run by
werkzeug with one change: requests are served one at a time. moto checks ``If-Match`` /
``If-None-Match`` and then stores the object in two separate steps, so a threaded moto can
itself let two conditional writes both succeed; S3 and the other services evaluate the
condition and the write atomically, which serializing requests reproduces. (Connections
are still accepted concurrently.)

Command line (used by ``scripts/moto-server.sh``)::

    python -m dsh_fs.testing.moto_server start [--pidfile F]   # prints DSH_FS_S3_ENDPOINT=http://127.0.0.1:PORT
    python -m dsh_fs.testing.moto_server stop  [--pidfile F]
    python -m dsh_fs.testing.moto_server serve [--port N]      # foreground

``start`` forks a detached server, waits until it listens, writes its pid to the pidfile
(default ``$TMPDIR/dsh-fs-moto-<uid>.pid``) and prints the endpoint as a shell assignment.
``stop`` terminates exactly that pid.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ("ENDPOINT_ENV", "MotoServer", "moto_available", "running_server")

ENDPOINT_ENV = "DSH_FS_S3_ENDPOINT"
"""environment variable naming an already running S3 endpoint (``scripts/moto-server.sh start``
prints the assignment)"""

_READY = "DSH_FS_MOTO_READY "


def moto_available() -> bool:
    """Can a moto server and the S3 provider's client be started here?"""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("moto", "werkzeug", "aiobotocore"))


def _serialized(app: Any) -> Any:
    lock = threading.Lock()

    def serve(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        with lock:
            body = app(environ, start_response)
            try:
                return [b"".join(body)]
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()

    return serve


def serve(host: str = "127.0.0.1", port: int = 0, *, announce: bool = True) -> None:
    """Run the serialized moto S3 server in the foreground until SIGTERM/SIGINT.

    :param port: TCP port; ``0`` picks a free one
    :param announce: print ``DSH_FS_MOTO_READY <url>`` on stdout once listening
    """
    import logging

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = _serialized(DomainDispatcherApplication(create_backend_app))
    class Handler(MotoRequestHandler):  # type: ignore[misc, valid-type]
        disable_nagle_algorithm = True  # answers written in pieces must not wait for delayed ACKs

    server = make_server(host, port, app, threaded=True, request_handler=Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    if announce:
        sys.stdout.write(f"{_READY}http://{host}:{server.server_port}\n")
        sys.stdout.flush()
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


class MotoServer:
    """A serialized moto S3 server in a child process on a free loopback port.

    ``with MotoServer() as server: server.endpoint_url`` — the child is terminated on exit.

    :param startup_timeout: seconds to wait for the server to listen
    :raises RuntimeError: when the server does not come up in time
    """

    def __init__(self, *, startup_timeout: float = 60.0) -> None:
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[str] | None = None
        self.endpoint_url: str | None = None

    def start(self, *, detach: bool = False) -> str:
        """Start the server and return its endpoint URL."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dsh_fs.testing.moto_server", "serve"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=detach,
        )
        assert self.process.stdout is not None
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(self.startup_timeout)
        line = result[0] if result else ""
        if not line.startswith(_READY):
            exited = self.process.poll()
            self.stop()
            if exited is not None:
                raise RuntimeError(f"moto server exited with status {exited} before listening")
            raise RuntimeError(f"moto server did not start within {self.startup_timeout} s")
        self.endpoint_url = line[len(_READY) :].strip()
        return self.endpoint_url

    def stop(self) -> None:
        """Terminate the child (idempotent)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> "MotoServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_server() -> Iterator[str]:
    """The endpoint of ``$DSH_FS_S3_ENDPOINT`` when set, else of a server started for the block."""
    configured = os.environ.get(ENDPOINT_ENV)
    if configured:
        yield configured
        return
    with MotoServer() as server:
        assert server.endpoint_url is not None
        yield server.endpoint_url


def _default_pidfile() -> str:
    return os.path.join(tempfile.gettempdir(), f"dsh-fs-moto-{os.getuid()}.pid")


def _pid_in(pidfile: str) -> int | None:
    """The pid ``pidfile`` holds, or ``None`` (no such file, or not a pid)."""
    try:
        with open(pidfile, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def _running(pidfile: str) -> int | None:
    """The pid in ``pidfile`` when that process is still alive, else ``None``."""
    pid = _pid_in(pidfile)
    try:
        if pid is not None:
            os.kill(pid, 0)
    except OSError:
        return None
    return pid


def main(argv: list[str] | None = None) -> int:
    """``start`` / ``stop`` / ``serve`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m dsh_fs.testing.moto_server")
    parser.add_argument("command", choices=("start", "stop", "serve"))
    parser.add_argument("--pidfile", default=_default_pidfile())
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.host, args.port)
        return 0
    if args.command == "start":
        running = _running(args.pidfile)
        if running is not None:
            print(f"a moto server started with {args.pidfile} is still running (pid {running}): stop it first",
                  file=sys.stderr)
            return 1
        server = MotoServer()
        endpoint = server.start(detach=True)
        assert server.process is not None
        with open(args.pidfile, "w", encoding="ascii") as handle:
            handle.write(f"{server.process.pid}\n")
        print(f"{ENDPOINT_ENV}={endpoint}")
        return 0
    pid = _pid_in(args.pidfile)
    if pid is None:
        print(f"no moto server pidfile at {args.pidfile}", file=sys.stderr)
        return 1
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.05)
    os.unlink(args.pidfile)
    return 0


if __name__ == "__main__":
    sys.exit(main())

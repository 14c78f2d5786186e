"""dsh-fs exec relay: run on the far side as ``python3 -I -c <this file's text> [--base64]``,
once per exec of an exec channel (``execs``): a channel that can only run a command with some
stdin and return its stdout (a sandbox SDK's ``commands.run``, deepagents' ``execute``).

The helper must outlive each exec, so the first exec starts a *hub*: this program forked into
a daemon that runs the helper's command (``boot``) with pipes, listens on a Unix socket in a
private directory (``$XDG_RUNTIME_DIR`` or ``/tmp``, ``dsh-fs-<uid>/relay/<session>.sock``,
the session a random name the near side chose), and keeps the two byte streams: what the near
side sent for the helper's stdin, counted, and what the helper wrote to stdout, kept until the
near side says it has it. Each exec is one request to the hub::

    {"session": S, "in_at": offset, "ack": offset, "wait": ms, "max": bytes[, "start": argv][, "close": true]}
    + body: stdin bytes from offset ``in_at``

answered by ``{"out_at": offset, "in": count, "ended": status | null, "why": text}`` + the
helper's stdout from ``out_at`` (at most ``max`` bytes, waiting up to ``wait`` ms for some). By
offsets a repeated exec changes nothing twice, and one lost costs nothing: the near side sends
again from what the hub counted. ``{"gone": true}``: no hub for that session (it ended, or never
started). ``--base64``: stdin and stdout are base64 text (stdout one line, ``DSHFS:`` first), for
channels that carry text only.

The hub ends when the helper ended and its output was fetched, or after ``IDLE_S`` seconds
without an exec (the helper's stdin is closed: it finishes a mutation under way, then ends).
The text is a constant of the near side; every value travels on stdin. Written for any
Python 3, like ``boot``.
"""

import base64
import json
import os
import socket
import struct
import sys
import time

__all__ = ("Hub", "main", "request", "runtime_dir")

HEADER = struct.Struct(">II")
IDLE_S = 600
ENDED_KEEP_S = 60
STDERR_KEEP = 4096
STDERR_DRAIN_S = 30
"""how long the end of the helper's stdout waits for the end of its stderr, so the ``why``
of its end holds its last words (bounded: a grandchild may keep stderr open)"""
LIMIT = 1 << 30
SOCKET_ROOM = 40
"""the longest runtime directory used for sockets: its socket paths stay under the 108 bytes
of ``sockaddr_un`` (``dsh-fs-<uid>/relay/<32 hex>.sock`` takes about 60)"""


def runtime_dir():
    """The private directory of this user's hub sockets (made 0700): below
    ``$XDG_RUNTIME_DIR``, or ``/tmp`` when there is none or a socket path there would be
    longer than a Unix socket's name may be."""
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    if len(base) > SOCKET_ROOM:
        base = "/tmp"
    top = os.path.join(base, "dsh-fs-%d" % os.getuid())
    path = os.path.join(top, "relay")
    for directory in (top, path):
        try:
            os.mkdir(directory, 0o700)
        except OSError:
            pass
    st = os.lstat(path)
    if st.st_uid != os.getuid() or st.st_mode & 0o077 or not os.path.isdir(path) or os.path.islink(path):
        raise OSError("%s is not a private directory" % path)
    return path


def frame(message, body=b""):
    data = json.dumps(message).encode("utf-8")
    return HEADER.pack(len(data), len(body)) + data + body


def parse(data):
    """(message, body) of one frame held whole in ``data``."""
    jlen, blen = HEADER.unpack_from(data)
    if jlen > LIMIT or blen > LIMIT or len(data) < HEADER.size + jlen + blen:
        raise ValueError("not a frame")
    message = json.loads(data[HEADER.size:HEADER.size + jlen].decode("utf-8"))
    return message, data[HEADER.size + jlen:HEADER.size + jlen + blen]


def recv_frame(sock):
    """One frame from a socket."""
    head = recv_exact(sock, HEADER.size)
    jlen, blen = HEADER.unpack(head)
    if jlen > LIMIT or blen > LIMIT:
        raise ValueError("not a frame")
    return parse(head + recv_exact(sock, jlen + blen))


def recv_exact(sock, count):
    parts = []
    while count > 0:
        data = sock.recv(min(count, 1 << 20))
        if not data:
            raise EOFError("the connection ended")
        parts.append(data)
        count -= len(data)
    return b"".join(parts)


class Hub(object):
    """The daemon that keeps one helper and its two streams (see the module docstring)."""

    def __init__(self, argv, path):
        import subprocess
        import threading

        self.path = path
        self.lock = threading.Condition()
        self.in_count = 0
        self.out_base = 0
        self.out = bytearray()
        self.ended = None
        self.ended_at = None
        self.stderr = bytearray()
        self.stderr_done = threading.Event()
        self.last = time.time()
        self.writing = threading.Lock()
        self.threading = threading
        self.subprocess = subprocess
        self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      close_fds=True)

    def pump_stdout(self):
        while True:
            data = os.read(self.child.stdout.fileno(), 1 << 20)
            if not data:
                break
            with self.lock:
                self.out += data
                self.lock.notify_all()
        self.stderr_done.wait(STDERR_DRAIN_S)  # its last words are in ``why`` (they may come after stdout's end)
        status = self.child.wait()
        with self.lock:
            self.ended = status
            self.ended_at = time.time()
            self.lock.notify_all()

    def pump_stderr(self):
        try:
            while True:
                data = os.read(self.child.stderr.fileno(), 1 << 16)
                if not data:
                    return
                with self.lock:
                    self.stderr += data
                    del self.stderr[:-STDERR_KEEP]
        finally:
            self.stderr_done.set()

    def handle(self, conn):
        try:
            message, body = recv_frame(conn)
            conn.sendall(self.answer(message, body))
        except (OSError, ValueError, EOFError):
            pass
        finally:
            conn.close()

    def answer(self, message, body):
        in_at = int(message.get("in_at", 0))
        ack = int(message.get("ack", 0))
        wait = min(max(int(message.get("wait", 0)), 0), 60000) / 1000.0
        most = max(int(message.get("max", 1 << 20)), 1)
        with self.writing:  # one writer at a time: a repeated exec never writes its bytes twice
            with self.lock:
                self.last = time.time()
                if ack > self.out_base:
                    drop = min(ack - self.out_base, len(self.out))
                    del self.out[:drop]
                    self.out_base += drop
                fresh = body[max(0, self.in_count - in_at):] if in_at <= self.in_count else b""
                ended = self.ended
            if fresh and ended is None:
                try:
                    self.child.stdin.write(fresh)
                    self.child.stdin.flush()
                except (OSError, ValueError):
                    pass
                with self.lock:
                    self.in_count += len(fresh)
            if message.get("close"):
                try:
                    self.child.stdin.close()
                except (OSError, ValueError):
                    pass
        deadline = time.time() + wait
        with self.lock:
            start = max(ack, self.out_base)
            while start - self.out_base >= len(self.out) and self.ended is None and time.time() < deadline:
                self.lock.wait(deadline - time.time())
                start = max(ack, self.out_base)
            offset = start - self.out_base
            data = bytes(self.out[offset:offset + most])
            ended = self.ended if offset + len(data) >= len(self.out) else None
            why = bytes(self.stderr).decode("utf-8", "replace") if ended is not None else ""
            self.last = time.time()
            return frame({"out_at": start, "in": self.in_count, "ended": ended, "why": why}, data)

    def serve(self, listener):
        for target in (self.pump_stdout, self.pump_stderr):
            thread = self.threading.Thread(target=target)
            thread.daemon = True
            thread.start()
        listener.settimeout(1.0)
        while True:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                with self.lock:
                    idle = time.time() - self.last
                    gone = self.ended is not None and (not self.out or time.time() - self.ended_at > ENDED_KEEP_S)
                if gone and idle > 1.0:
                    return
                if idle > IDLE_S:
                    self.stop()
                    return
                continue
            thread = self.threading.Thread(target=self.handle, args=(conn,))
            thread.daemon = True
            thread.start()

    def stop(self):
        try:
            self.child.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.child.wait(30)
        except self.subprocess.TimeoutExpired:
            self.child.kill()


def start_hub(argv, path):
    """Fork a daemon that runs the hub for ``argv`` listening on ``path``; return once it listens."""
    try:
        os.unlink(path)
    except OSError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    pid = os.fork()
    if pid != 0:
        listener.close()
        os.waitpid(pid, 0)  # the first child ends at once; the hub is its child, on its own
        return
    try:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        hub = Hub(argv, path)
        hub.serve(listener)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os._exit(0)


def request(message, body):
    """Pass one request to the session's hub (started first when asked); its answer frame."""
    session = str(message.get("session", ""))
    if not session or session.strip("0123456789abcdef"):
        return frame({"gone": True, "why": "no session named"})
    try:
        path = os.path.join(runtime_dir(), session + ".sock")
        if message.get("start") is not None:
            start_hub([str(a) for a in message["start"]], path)
    except OSError as exc:
        return frame({"gone": True, "why": "the hub cannot start: %s" % exc})
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        return frame({"gone": True, "why": "the hub is not running"})
    try:
        conn.sendall(frame(message, body))
        head = recv_exact(conn, HEADER.size)
        jlen, blen = HEADER.unpack(head)
        return head + recv_exact(conn, jlen + blen)
    except (OSError, EOFError) as exc:
        return frame({"gone": True, "why": "the hub ended the connection: %s" % exc})
    finally:
        conn.close()


def main():
    text = "--base64" in sys.argv[1:]
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if text:
        data = base64.b64decode(b"".join(data.split()))
    message, body = parse(data)
    answer = request(message, body)
    out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else sys.stdout
    if text:
        out.write(b"DSHFS:" + base64.b64encode(answer) + b"\n")
    else:
        out.write(answer)
    out.flush()


if __name__ == "__main__":
    main()

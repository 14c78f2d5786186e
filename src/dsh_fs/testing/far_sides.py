"""Far sides for the channel tests and benchmarks, started and stopped by the caller: an
``sshd`` on a loopback port with keys made for it (``SshServer``) and a podman container with
no image and no network whose ``python3`` is this machine's (``PodmanBox``). Each installs what
it needs when it is missing (Debian's ``openssh-server``; ``podman`` and ``runc``) with
``apt-get``, as root; elsewhere it raises ``FarSideUnavailable`` naming what to install.

No pytest here (``tests/contract/conftest.py`` wraps them in session fixtures). Both clean up
after themselves on exit, also when the test session fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from types import TracebackType

__all__ = ("FarSideUnavailable", "PodmanBox", "SshServer", "ensure_programs")

_APT_LOCK = "/tmp/dsh-fs-apt.lock"


class FarSideUnavailable(RuntimeError):
    """A far side cannot be started here; the message says what to install or allow."""


def ensure_programs(programs: dict[str, str]) -> dict[str, str]:
    """The path of each program (name → Debian package that ships it), installing the missing
    packages with ``apt-get`` when this process is root and has it (one install at a time
    across processes).

    :raises FarSideUnavailable: a program is missing and cannot be installed here
    """
    found = {name: _which(name) for name in programs}
    missing = sorted({programs[name] for name, path in found.items() if path is None})
    if missing:
        apt = shutil.which("apt-get")
        if os.geteuid() != 0 or apt is None:
            raise FarSideUnavailable(f"install {' '.join(missing)} (as root: apt-get install -y {' '.join(missing)})")
        import fcntl

        with open(_APT_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            still = sorted({programs[n] for n in programs if _which(n) is None})
            if still:
                env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
                installed = subprocess.run([apt, "install", "-y", "-qq", *still], env=env, capture_output=True, text=True)
                if installed.returncode != 0:  # an old package list: refresh it once
                    subprocess.run([apt, "update", "-qq"], env=env, capture_output=True, text=True)
                    installed = subprocess.run([apt, "install", "-y", "-qq", *still], env=env, capture_output=True,
                                               text=True)
                if installed.returncode != 0:
                    raise FarSideUnavailable(f"apt-get install {' '.join(still)} failed: {installed.stderr[-500:]}")
        found = {name: _which(name) for name in programs}
        if any(path is None for path in found.values()):
            raise FarSideUnavailable(f"{' '.join(missing)} installed, but {sorted(programs)} are not all found")
    return {name: path for name, path in found.items() if path is not None}


def _which(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SshServer:
    """An ``sshd`` listening on ``127.0.0.1`` for this user, with a host key and a client key
    made for it in a private directory; ``ssh_command`` logs in with that key only, trusting
    that host key only (no known_hosts, no user configuration).

    Use as a context manager; ``destination`` and ``ssh_command`` once entered.
    """

    def __init__(self) -> None:
        self.directory = ""
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.user = os.environ.get("USER") or _user_name()

    @property
    def destination(self) -> str:
        return f"{self.user}@127.0.0.1"

    @property
    def ssh_command(self) -> list[str]:
        """``ssh`` with this server's client key and host key, and nothing from ``~/.ssh``."""
        return [self._ssh, "-F", "/dev/null", "-i", os.path.join(self.directory, "client_key"), "-p", str(self.port),
                "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
                "-o", f"UserKnownHostsFile={os.path.join(self.directory, 'known_hosts')}",
                "-o", "StrictHostKeyChecking=yes"]

    def url(self, path: str) -> str:
        """The ``ssh://`` URL of ``path`` on this server."""
        return f"ssh://{self.destination}:{self.port}{path}"

    def __enter__(self) -> SshServer:
        programs = ensure_programs({"sshd": "openssh-server", "ssh": "openssh-client", "ssh-keygen": "openssh-client"})
        self._ssh = programs["ssh"]
        self.directory = tempfile.mkdtemp(prefix="dsh-fs-sshd-")
        keygen = programs["ssh-keygen"]
        for name in ("host_key", "client_key"):
            subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(self.directory, name)],
                           check=True, capture_output=True)
        shutil.copy(os.path.join(self.directory, "client_key.pub"), os.path.join(self.directory, "authorized_keys"))
        with open(os.path.join(self.directory, "host_key.pub"), encoding="ascii") as handle:
            host_key = handle.read().split()[:2]
        self.port = _free_port()
        with open(os.path.join(self.directory, "known_hosts"), "w", encoding="ascii") as handle:
            handle.write(f"[127.0.0.1]:{self.port} {' '.join(host_key)}\n")
        config = os.path.join(self.directory, "sshd_config")
        with open(config, "w", encoding="ascii") as handle:
            handle.write("\n".join([
                f"Port {self.port}", "ListenAddress 127.0.0.1",
                f"HostKey {os.path.join(self.directory, 'host_key')}",
                f"AuthorizedKeysFile {os.path.join(self.directory, 'authorized_keys')}",
                f"PidFile {os.path.join(self.directory, 'sshd.pid')}",
                "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
                "PermitRootLogin prohibit-password", "StrictModes no", "LogLevel ERROR",
                "MaxStartups 64:30:128", "MaxSessions 64", "",
            ]))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self.process = subprocess.Popen([programs["sshd"], "-D", "-e", "-f", config], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                said = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                self.__exit__(None, None, None)
                raise FarSideUnavailable(f"sshd exited with status {self.process.returncode}: {said[-500:]}")
            probe = subprocess.run([*self.ssh_command, self.destination, "--", "true"], capture_output=True)
            if probe.returncode == 0:
                return
            time.sleep(0.2)
        self.__exit__(None, None, None)
        raise FarSideUnavailable(f"sshd on port {self.port} accepted no login within 30 s")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)


def _user_name() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


PODMAN_RUN = ("--network=none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096")
"""``podman run`` options of the box: no network; limits these machines' runtime accepts"""

HOST_MOUNTS = ("/usr", "/lib", "/lib64", "/bin", "/etc")
"""directories of this machine the box sees read-only (its ``python3`` and libraries)"""


class PodmanBox:
    """A podman container made from an empty root directory (no image, no registry) with
    ``HOST_MOUNTS`` read-only and ``mounts`` read-write, running ``sleep`` until the box is left
    (then removed). ``podman exec -i`` reaches it: ``url(path)`` is its ``podman://`` URL.

    :param mounts: host directory → path in the box, read-write
    :param runtime: the OCI runtime (``runc``: crun refuses hybrid cgroup hierarchies)
    """

    def __init__(self, mounts: dict[str, str], *, runtime: str = "runc") -> None:
        self.mounts = dict(mounts)
        self.runtime = runtime
        self.name = f"dsh-fs-{uuid.uuid4().hex[:10]}"
        self.directory = ""
        self.podman = ""

    def url(self, path: str) -> str:
        return f"podman://{self.name}{path}"

    def exec_argv(self, command: Sequence[str]) -> list[str]:
        """``podman exec -i <box> <command>`` (for tests that run something there themselves)."""
        return [self.podman, "exec", "-i", self.name, *command]

    def __enter__(self) -> PodmanBox:
        programs = ensure_programs({"podman": "podman", self.runtime: self.runtime})
        self.podman = programs["podman"]
        self.directory = tempfile.mkdtemp(prefix="dsh-fs-box-")
        rootfs = os.path.join(self.directory, "rootfs")
        for part in ("tmp", "root", "proc", "sys", "dev", "run", *(m.lstrip("/") for m in HOST_MOUNTS),
                     *(p.lstrip("/") for p in self.mounts.values())):
            os.makedirs(os.path.join(rootfs, part), exist_ok=True)
        os.chmod(os.path.join(rootfs, "tmp"), 0o1777)
        volumes = [arg for host in HOST_MOUNTS if os.path.isdir(host) for arg in ("-v", f"{host}:{host}:ro")]
        volumes += [arg for host, inside in self.mounts.items() for arg in ("-v", f"{host}:{inside}")]
        run = subprocess.run([self.podman, "--runtime", self.runtime, "run", "-d", "--name", self.name, *PODMAN_RUN,
                              *volumes, "--rootfs", rootfs, "/usr/bin/sleep", "infinity"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            self.__exit__(None, None, None)
            raise FarSideUnavailable(f"podman run failed: {run.stderr.strip()[-800:]}")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.podman:
            subprocess.run([self.podman, "rm", "-f", "-t", "0", self.name], capture_output=True)
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)

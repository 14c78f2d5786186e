"""Bearer tokens for ``dsh-fs mcp --http``: one token per agent.

Without authentication any local user could reach a loopback server and read and write the
serving user's files. So every HTTP request (session creation included) must carry
``Authorization: Bearer <token>``; the SDK's bearer middleware asks ``BearerTokens`` (an
SDK ``TokenVerifier``) and answers ``401`` otherwise. Each token names a principal
(``agent-1``, ``agent-2``, … in file order): the observation owner of that agent's
stateless requests, and the credential its sessions are bound to (the SDK refuses a session
to any other token).

A token file holds one token per line (blank lines and ``#`` comments ignored). It must be
a regular file (not a symlink) owned by the serving user and unreadable by anyone else
(mode ``0600``), as ``ssh`` demands of a private key. New tokens are 256 random bits
(``secrets``), written with ``O_EXCL``, mode ``0600``, then fsynced.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import stat
from collections.abc import Callable, Sequence
from typing import Final

from mcp.server.auth.provider import AccessToken

__all__ = ("BearerTokens", "load_token_file", "mint_tokens", "principal_name", "require_private", "write_token_file")

TOKEN_PREFIX: Final = "dshfs_"
_TOKEN: Final = re.compile(r"[A-Za-z0-9._~+/=-]{16,512}")
"""RFC 6750 ``b64token`` characters; at least 16 of them (a guessable token is no token)"""
_MAX_FILE: Final = 1 << 20
_HEADER: Final = "# dsh-fs mcp bearer tokens: one per agent; line order names them agent-1, agent-2, …\n"


def require_private(info: os.stat_result, what: str, *, chmod: str) -> None:
    """Refuse a file or directory another user could plant, read or change.

    :param info: its ``stat`` (taken without following a symlink)
    :param what: how the messages name it
    :param chmod: the command that fixes its mode
    :raises ValueError: it is not owned by this user, or grants group or others any access
    """
    if info.st_uid != os.geteuid():
        raise ValueError(f"{what} is owned by uid {info.st_uid}, not by this user ({os.geteuid()})")
    if info.st_mode & 0o077:
        raise ValueError(f"{what} is accessible by other users (mode {stat.S_IMODE(info.st_mode):04o}): run {chmod}")


def principal_name(index: int) -> str:
    """The principal of the ``index``-th token (0-based): ``agent-<index + 1>``."""
    return f"agent-{index + 1}"


def mint_tokens(count: int) -> list[str]:
    """``count`` new tokens (``dshfs_`` + 43 URL-safe characters: 256 random bits).

    :raises ValueError: for a count below 1
    """
    if count < 1:
        raise ValueError("the number of tokens must be at least 1")
    return [TOKEN_PREFIX + secrets.token_urlsafe(32) for _ in range(count)]


def load_token_file(path: str) -> list[str]:
    """The tokens in ``path``, in order.

    :raises ValueError: the file is not a regular file owned by this user, can be read or
        written by others, is larger than 1 MiB, is not UTF-8, has a malformed or repeated
        token (the message names the line), or has none
    :raises OSError: it cannot be opened (``FileNotFoundError`` when it does not exist)
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise ValueError(f"token file {path} is a symlink: give the file itself") from exc
        raise
    try:
        info = os.fstat(fd)  # before fdopen, which refuses a directory with its own error
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"token file {path} is not a regular file")
        require_private(info, f"token file {path}", chmod=f"chmod 600 {path}")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(_MAX_FILE + 1)
    if len(data) > _MAX_FILE:
        raise ValueError(f"token file {path} is larger than 1 MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"token file {path} is not UTF-8 text") from exc
    tokens: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        token = line.strip()
        if not token or token.startswith("#"):
            continue
        if not _TOKEN.fullmatch(token):
            raise ValueError(
                f"token file {path} line {number}: a token is 16-512 characters of A-Z a-z 0-9 - . _ ~ + / ="
            )
        if token in tokens:
            raise ValueError(f"token file {path} line {number}: repeats the token of {principal_name(tokens.index(token))}")
        tokens.append(token)
    if not tokens:
        raise ValueError(f"token file {path} holds no token")
    return tokens


def write_token_file(path: str, tokens: Sequence[str]) -> None:
    """Create ``path`` (mode ``0600``; never over an existing file or through a symlink) with
    one token per line, and fsync it.

    :raises FileExistsError: ``path`` exists (a dangling symlink included)
    :raises OSError: it cannot be created or written (a partial file is removed)
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_HEADER + "".join(f"{token}\n" for token in tokens))
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(path)
        raise


def _check(tokens: Sequence[str]) -> None:
    if not tokens:
        raise ValueError("at least one token is needed")
    if len(set(tokens)) != len(tokens):
        raise ValueError("tokens must differ")


class BearerTokens:
    """The SDK ``TokenVerifier`` for a fixed list of tokens: a presented token is compared
    with every token in constant time (``hmac.compare_digest``, no early exit), so neither
    the time taken nor the answer tells an attacker how much of a guess was right.

    :param tokens: one per agent; the ``i``-th authenticates as ``principal_name(i)``
    :raises ValueError: for no tokens, or a repeated one
    """

    def __init__(self, tokens: Sequence[str]) -> None:
        _check(tokens)
        self._secrets = [(token.encode("utf-8"), principal_name(i)) for i, token in enumerate(tokens)]
        self._next = len(tokens)
        self._on_revoked: list[Callable[[list[str]], None]] = []

    def on_revoked(self, listener: Callable[[list[str]], None]) -> None:
        """Call ``listener`` with the revoked principals each time ``replace`` drops tokens
        (synchronously, after they stopped authenticating; the connection budget closes their
        connections this way)."""
        self._on_revoked.append(listener)

    def replace(self, tokens: Sequence[str]) -> list[str]:
        """Accept ``tokens`` from now on (the token file was re-read): a token kept keeps its
        principal, a new one gets the next unused name (a name is never given twice), and
        every other token stops authenticating at once.

        :return: the principals of the tokens that were dropped (revoked)
        :raises ValueError: for no tokens, or a repeated one (nothing changes then)
        """
        _check(tokens)
        known = dict(self._secrets)
        secrets_now: list[tuple[bytes, str]] = []
        for token in tokens:
            secret = token.encode("utf-8")
            name = known.get(secret)
            if name is None:
                name = principal_name(self._next)
                self._next += 1
            secrets_now.append((secret, name))
        kept = {secret for secret, _ in secrets_now}
        revoked = [name for secret, name in self._secrets if secret not in kept]
        self._secrets = secrets_now
        if revoked:
            for listener in self._on_revoked:
                listener(revoked)
        return revoked

    def __len__(self) -> int:
        return len(self._secrets)

    def principal(self, token: str) -> str | None:
        """The principal ``token`` authenticates, or ``None`` (constant time, see the class).

        :param token: what followed ``Bearer `` in the ``Authorization`` header
        """
        presented = token.encode("utf-8", "surrogatepass")
        principal: str | None = None
        for secret, name in self._secrets:
            if hmac.compare_digest(presented, secret):
                principal = name
        return principal

    def authenticates(self, headers: Sequence[tuple[bytes, bytes]]) -> bool:
        """Whether a request with these (ASGI, lower-case) headers carries one of the tokens:
        an ``Authorization`` header of the ``Bearer`` scheme (any case), read as the SDK's
        ``BearerAuthBackend`` reads it."""
        return self.principal_of(headers) is not None

    def principal_of(self, headers: Sequence[tuple[bytes, bytes]]) -> str | None:
        """The principal whose token these (ASGI, lower-case) headers carry (``authenticates``),
        or ``None``."""
        value = next((v for k, v in headers if k == b"authorization"), None)
        if value is None or not value[:7].lower() == b"bearer ":
            return None
        return self.principal(value[7:].decode("latin-1"))

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK ``TokenVerifier`` method: the ``AccessToken`` of ``principal(token)``, or ``None``.

        :param token: what followed ``Bearer `` in the ``Authorization`` header
        """
        principal = self.principal(token)
        if principal is None:
            return None
        return AccessToken(token="", client_id=principal, scopes=[])

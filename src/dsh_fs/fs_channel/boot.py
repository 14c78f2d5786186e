"""dsh-fs channel bootstrap: run on the far side as ``python3 -I -c <this file's text>``.

It reads the ``boot`` and ``open`` frames from stdin, checks the interpreter's version, finds
the helper bundle (a zip of dsh-fs's modules) in its cache by the SHA-256 the near side named
or receives it over stdin, checks the bytes against that hash, keeps them in the cache, then
imports the helper from those verified bytes held in memory (never from a file that could
change after the check) and hands it stdin and stdout. The compiled code of the bundle is
cached too, and used only when its SHA-256 is the one the near side was told by an earlier
start (the near side keeps it: a cache file changed since is compiled again). Answers:
``{"need": true}`` (send the bundle), ``{"code": {"magic", "hash"}}`` (code compiled and
kept: remember its hash), ``{"old": "<version>"}`` (an interpreter older than the helper
needs), ``{"bad": "<reason>"}`` (bytes that do not match the hash); the helper then answers
``ready``/``fail``.

The text is a constant of the near side: the caller's values (root, paths, options) travel
in frames on stdin, never in the command line. Written for any Python 3 so that an old one
can say it is too old.
"""

import hashlib
import json
import os
import struct
import sys

__all__ = ("cache_dirs", "cached", "compiled", "install", "keep", "main", "read_exact", "read_frame", "send", "sources")

NEED = (3, 11)
HELPER = "dsh_fs.far_helper.serve"
"""the helper's entry module in the bundle, loaded by name as a console script names its entry
point: the helper uses this program's cache (``cache_dirs``, ``keep``), so this program imports
none of the helper's modules itself"""
HEADER = struct.Struct(">II")
LIMIT = 1 << 30


def read_exact(count):
    """``count`` bytes of stdin; the process ends quietly when stdin ends first."""
    parts = []
    while count > 0:
        data = os.read(0, min(count, 1 << 20))
        if not data:
            sys.exit(0)
        parts.append(data)
        count -= len(data)
    return b"".join(parts)


def read_frame():
    """One frame of stdin: (JSON object, body bytes)."""
    jlen, blen = HEADER.unpack(read_exact(HEADER.size))
    if jlen > LIMIT or blen > LIMIT:
        sys.exit(3)
    message = json.loads(read_exact(jlen).decode("utf-8", "surrogatepass"))
    return message, read_exact(blen)


def send(message):
    """Write one frame (no body) to stdout."""
    data = json.dumps(message).encode("utf-8")
    out = HEADER.pack(len(data), 0) + data
    while out:
        out = out[os.write(1, out):]


def cache_dirs():
    """Where bundles are kept, in the order tried: ``$XDG_CACHE_HOME/dsh-fs/helper``,
    ``~/.cache/dsh-fs/helper``, then a per-user directory of the temp area."""
    found = []
    xdg = os.environ.get("XDG_CACHE_HOME")
    home = os.path.expanduser("~")
    if xdg and os.path.isabs(xdg):
        found.append(os.path.join(xdg, "dsh-fs", "helper"))
    if home and home != "~" and os.path.isabs(home):
        found.append(os.path.join(home, ".cache", "dsh-fs", "helper"))
    found.append(os.path.join("/tmp", "dsh-fs-%d" % os.getuid(), "helper"))
    return found


def cached(name, digest):
    """The bytes of the cache file ``name`` whose SHA-256 is ``digest``; ``None`` when no cache
    holds them."""
    for directory in cache_dirs():
        try:
            with open(os.path.join(directory, name), "rb") as handle:
                data = handle.read(LIMIT + 1)
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == digest:
            return data
    return None


def keep(name, data):
    """Keep ``data`` as the cache file ``name`` in the first usable cache (a new file, never one
    that was there, renamed into place); a cache that cannot be written costs only the next
    start's work. What a cache holds is never trusted: it is used only when its hash is the
    expected one."""
    for directory in cache_dirs():
        try:
            os.makedirs(os.path.dirname(directory), mode=0o700, exist_ok=True)
            os.makedirs(directory, mode=0o700, exist_ok=True)
            temp = os.path.join(directory, ".%s.%d.tmp" % (name, os.getpid()))
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(temp, os.path.join(directory, name))
            return
        except OSError:
            continue


def sources(data):
    """The ``.py`` files of the zip ``data``: name in the zip -> bytes."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist() if name.endswith(".py")}


def compiled(files, base, digest, hint):
    """The code objects of ``files``: from the code cache when its SHA-256 is the one the near
    side remembers (``hint``, reported by an earlier start on this interpreter), else compiled
    now, kept, and their hash reported (``{"code": …}``) for the next start."""
    import importlib.util
    import marshal

    magic = importlib.util.MAGIC_NUMBER.hex()
    name = "%s.%s.code" % (digest, magic)
    if isinstance(hint, dict) and hint.get("magic") == magic and isinstance(hint.get("hash"), str):
        data = cached(name, hint["hash"])
        if data is not None:
            return marshal.loads(data)
    codes = {}
    for path, source in files.items():
        codes[path] = compile(source, base + "/" + path, "exec", dont_inherit=True)
    data = marshal.dumps(codes)
    keep(name, data)
    send({"code": {"magic": magic, "hash": hashlib.sha256(data).hexdigest()}})
    return codes


def install(files, codes, base):
    """Make the modules of ``files`` importable from memory (first on ``sys.meta_path``), with
    the code objects ``codes`` (name in the zip -> code)."""
    import importlib.abc
    import importlib.util

    class Bundle(importlib.abc.MetaPathFinder, importlib.abc.SourceLoader):
        def _where(self, fullname):
            rel = fullname.replace(".", "/")
            if rel + "/__init__.py" in files:
                return rel + "/__init__.py", rel
            if rel + ".py" in files:
                return rel + ".py", None
            return None

        def find_spec(self, fullname, path=None, target=None):
            where = self._where(fullname)
            if where is None:
                return None
            search = [base + "/" + where[1]] if where[1] is not None else None
            return importlib.util.spec_from_file_location(fullname, base + "/" + where[0], loader=self,
                                                          submodule_search_locations=search)

        def get_filename(self, fullname):
            where = self._where(fullname)
            if where is None:
                raise ImportError(fullname)
            return base + "/" + where[0]

        def get_data(self, path):
            found = files.get(path[len(base) + 1:]) if path.startswith(base + "/") else None
            if found is None:
                raise OSError(path)
            return found

        def get_code(self, fullname):
            where = self._where(fullname)
            code = codes.get(where[0]) if where is not None else None
            return code if code is not None else importlib.abc.SourceLoader.get_code(self, fullname)

    sys.meta_path.insert(0, Bundle())


def main():
    first, _ = read_frame()
    opened = read_frame()
    if sys.version_info[:2] < NEED:
        send({"old": "%d.%d.%d" % sys.version_info[:3], "exe": sys.executable})
        return
    boot = first.get("boot") or {}
    digest = str(boot.get("hash"))
    if len(digest) != 64 or digest.strip("0123456789abcdef"):
        send({"bad": "the boot frame names no SHA-256"})
        return
    data = cached(digest + ".zip", digest)
    if data is None:
        send({"need": True})
        _, data = read_frame()
        found = hashlib.sha256(data).hexdigest()
        if found != digest:
            send({"bad": "the bundle's SHA-256 is %s, not %s" % (found, digest)})
            return
        keep(digest + ".zip", data)
    files = sources(data)
    base = "/dsh-fs-helper-" + digest[:16]
    install(files, compiled(files, base, digest, boot.get("code")), base)
    import importlib

    importlib.import_module(HELPER).main([opened])


if __name__ == "__main__":
    main()

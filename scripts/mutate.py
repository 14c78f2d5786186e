#!/usr/bin/env python3
"""Mutation testing for one module: apply one small mutation at a time, run the module's own
tests against it, and report the mutants no test caught.

    .venv/bin/python scripts/mutate.py src/dsh_fs/spill/local.py -t tests/unit/spill/test_spill_local.py
    .venv/bin/python scripts/mutate.py src/dsh_fs/patch/*.py -t tests/unit/patch/test_patch_*.py -j 2

Each mutant is a change a real bug could look like: a comparison turned (``<`` → ``<=``,
``==`` → ``!=``, ``in`` → ``not in``, ``is`` → ``is not``), ``and`` ↔ ``or``, a ``not``
dropped, ``True`` ↔ ``False``, an integer off by one, ``+`` ↔ ``-``, a flag dropped from an
``|`` chain (``O_EXCL | O_NOFOLLOW`` → ``O_EXCL``), a call statement, a ``raise`` or a
``continue``/``break`` made a ``pass``, a ``return X`` made ``return None``. Docstrings, type
annotations and ``if TYPE_CHECKING:`` blocks are left alone (mutating them changes nothing).

The source tree is copied once per worker into a temporary directory and the mutant is
written there (``PYTHONPATH`` puts the copy first), so the work tree is never changed and
tests may go on in it meanwhile. A mutant is *killed* when the tests fail or exceed the
time limit (``--timeout``, default three times the unmutated run plus 10 s). The tests must
pass unmutated first. ``--list`` prints the mutants without running anything; ``--only N [N ...]``
runs only those mutants (to recheck survivors).

``--fork``: one parent process imports pytest and the test run's third-party dependencies once
(those an unmutated run in a child imported), then for each mutant writes it into the
worker's copy and forks a child that forgets every module of the project (``dsh_fs``, the
tests) so it imports them afresh from the copy, and runs ``pytest.main`` in-process. The
child leads its own process group, which the parent kills at the time limit. The same
verdicts as the default mode (``tests/unit/scripts/test_mutate_script.py`` runs both), without an
interpreter and a pytest start per mutant.

The machine is shared: keep ``-j`` at 1 or 2 and name only the module's own test files.
Prints each survivor (file:line, what changed) and a ``killed K/T`` summary; exit status 0
when every mutant was killed, 1 otherwise (equivalent mutants, which no test can kill, are
for a person to judge from the list).
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import copy
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, "src")

_COMPARE = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BINOP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    """One mutation: the file, the site (the n-th candidate node in walk order) and what it does."""

    path: str
    site: int
    line: int
    what: str
    source: str = field(repr=False, compare=False)
    """the file as it was when the mutants were listed (later edits do not shift the sites)"""


def _skipped_ids(tree: ast.AST) -> set[int]:
    """Nodes not to mutate: docstrings, annotations, ``if TYPE_CHECKING:`` bodies, ``__all__``."""
    skip: set[int] = set()

    def drop(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                drop(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            drop(node.returns)
            for arg in [*node.args.args, *node.args.posonlyargs, *node.args.kwonlyargs, node.args.vararg,
                        node.args.kwarg]:
                if arg is not None:
                    drop(arg.annotation)
        if isinstance(node, ast.AnnAssign):
            drop(node.annotation)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            drop(node)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            drop(node)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            drop(node)  # attribute docstrings
    return skip


def _candidates(node: ast.AST) -> Iterator[tuple[str, object]]:
    """The mutations of one node: (description, replacement or in-place edit)."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _COMPARE.get(type(op))
            if new is not None:
                yield f"{type(op).__name__} -> {new.__name__}", ("op", i, new)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield f"{type(node.op).__name__} -> {other.__name__}", ("boolop", other)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not dropped", ("replace", node.operand)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"{node.value} -> {not node.value}", ("replace", ast.Constant(not node.value))
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield f"{node.value} -> {node.value + 1}", ("replace", ast.Constant(node.value + 1))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        yield f"| {ast.unparse(node.right)} dropped", ("replace", node.left)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP:
        new = _BINOP[type(node.op)]
        yield f"{type(node.op).__name__} -> {new.__name__}", ("binop", new)
    elif isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
        yield f"call removed: {ast.unparse(node)[:60]}", ("replace", ast.Pass())
    elif isinstance(node, ast.Raise) and node.exc is not None:
        yield f"raise removed: {ast.unparse(node)[:60]}", ("replace", ast.Pass())
    elif isinstance(node, (ast.Continue, ast.Break)):
        yield f"{type(node).__name__.lower()} -> pass", ("replace", ast.Pass())
    elif isinstance(node, ast.Return) and node.value is not None and not (
        isinstance(node.value, ast.Constant) and node.value.value is None
    ):
        yield f"return {ast.unparse(node.value)[:40]} -> return None", ("replace", ast.Return(ast.Constant(None)))


def _sites(tree: ast.AST) -> Iterator[tuple[ast.AST, str, object]]:
    skip = _skipped_ids(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        for what, edit in _candidates(node):
            yield node, what, edit


def mutants(path: str) -> list[Mutant]:
    """Every mutant of the Python file ``path``, in a stable order."""
    source = open(path, encoding="utf-8").read()
    tree = ast.parse(source, path)
    found = [Mutant(path, i, getattr(node, "lineno", 0), what, source) for i, (node, what, _) in enumerate(_sites(tree))]
    return sorted(found, key=lambda m: (m.line, m.site))


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, new: ast.AST) -> None:
        self.target, self.new = target, new

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.copy_location(self.new, node)
        return super().generic_visit(node)


def mutated_source(mutant: Mutant) -> str:
    """The source of ``mutant.path`` with that one mutation applied."""
    tree = ast.parse(mutant.source, mutant.path)
    node, _, edit = list(_sites(tree))[mutant.site]
    kind = edit[0]  # type: ignore[index]
    if kind == "op":
        _, i, new = edit  # type: ignore[misc]
        node.ops[i] = new()  # type: ignore[attr-defined]
    elif kind == "boolop":
        node.op = edit[1]()  # type: ignore[attr-defined,index]
    elif kind == "binop":
        node.op = edit[1]()  # type: ignore[attr-defined,index]
    else:
        tree = _Replace(node, copy.deepcopy(edit[1])).visit(tree)  # type: ignore[index]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


class Worker:
    """A private copy of ``src/`` in which one mutant at a time is written and tested."""

    def __init__(self, tests: list[str]) -> None:
        self.tmp = tempfile.mkdtemp(prefix="dsh-fs-mutate-")
        self.src = os.path.join(self.tmp, "src")
        shutil.copytree(SRC, self.src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        self.tests = tests
        self.log = os.path.join(self.tmp, "run.log")
        """the output of the last ``--fork`` child"""

    def pin(self, mutants: list[Mutant]) -> None:
        """Write the listed sources into the copy (the copy is then exactly what was mutated)."""
        for m in mutants:
            with open(os.path.join(self.src, os.path.relpath(m.path, SRC)), "w", encoding="utf-8") as out:
                out.write(m.source)

    def run(self, mutant: Mutant | None, timeout: float | None) -> tuple[bool, float]:
        """(tests passed, seconds) with ``mutant`` applied to the copy (``None``: unmutated)."""
        target = None
        if mutant is not None:
            target = os.path.join(self.src, os.path.relpath(mutant.path, SRC))
            original = mutant.source
            with open(target, "w", encoding="utf-8") as out:
                out.write(mutated_source(mutant))
        env = dict(os.environ, PYTHONPATH=self.src, PYTHONDONTWRITEBYTECODE="1")
        cmd = [sys.executable, "-m", "pytest", *self.pytest_args()]
        start = time.monotonic()
        try:
            done = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=timeout)
            passed = done.returncode == 0
        except subprocess.TimeoutExpired:
            passed = False
        finally:
            if target is not None:
                with open(target, "w", encoding="utf-8") as out:
                    out.write(original)
        return passed, time.monotonic() - start

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def pytest_args(self) -> list[str]:
        """pytest's arguments for one run of the tests (both modes): stop at the first failure."""
        return ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *self.tests]

    def write(self, mutant: Mutant, text: str) -> None:
        """Write ``text`` as ``mutant.path`` in the copy."""
        with open(os.path.join(self.src, os.path.relpath(mutant.path, SRC)), "w", encoding="utf-8") as out:
            out.write(text)


def _is_project(module: object, roots: tuple[str, ...]) -> bool:
    """Whether ``module`` is one of the project's (``dsh_fs``, the tests, anything loaded from
    ``roots``): the modules a ``--fork`` child imports afresh."""
    name = getattr(module, "__name__", "") or ""
    if name.split(".")[0] in ("dsh_fs", "tests", "conftest") or name.endswith(".conftest"):
        return True
    file = getattr(module, "__file__", None) or ""
    return bool(file) and os.path.abspath(file).startswith(roots)


def _child(worker: Worker, roots: tuple[str, ...], report: str | None) -> None:
    """The body of a ``--fork`` child: a process group of its own, the project's modules
    forgotten, pytest run in-process on the copy; never returns (``os._exit``). With
    ``report``, the names of the third-party modules it imported are written there (JSON)."""
    code = 3
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        log = os.open(worker.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd in (1, 2):
            os.dup2(log, fd)
        for name in [n for n, m in sys.modules.items() if _is_project(m, roots)]:
            del sys.modules[name]
        sys.path[:] = [worker.src, *(p for p in sys.path if p != worker.src)]
        os.environ["PYTHONPATH"] = worker.src
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        importlib.invalidate_caches()
        import pytest

        code = int(pytest.main(worker.pytest_args()))
        if report is not None:
            names = [n for n, m in list(sys.modules.items()) if not _is_project(m, roots)]
            with open(report, "w", encoding="utf-8") as out:
                json.dump(names, out)
    except BaseException:  # noqa: BLE001 - any failure of the run is a failed run
        code = 3
    finally:
        os._exit(code)


class Forker:
    """``--fork``: the parent that forks one child per test run (see the module docstring)."""

    def __init__(self, workers: list[Worker]) -> None:
        self.workers = workers
        self.roots = (*(w.src + os.sep for w in workers), SRC + os.sep, os.path.join(REPO, "tests") + os.sep)
        sys.dont_write_bytecode = True
        os.chdir(REPO)
        import pytest  # noqa: F401 - imported once, here, for every child

    def start(self, worker: Worker, report: str | None = None) -> int:
        """Fork a child running the tests on ``worker``'s copy as it is now; its pid."""
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(worker, self.roots, report)
        try:
            os.setpgid(pid, pid)  # also here: the group exists before the parent may kill it
        except OSError:
            pass  # the child has already done it (or exec'd/ended)
        return pid

    def warm(self) -> tuple[bool, float]:
        """Run the unmutated tests once in a child and import, here, the third-party modules it
        imported (so each later child finds them loaded); (passed, seconds) of that run."""
        report = os.path.join(self.workers[0].tmp, "modules.json")
        passed, seconds = self.wait(self.start(self.workers[0], report), None)
        if os.path.exists(report):
            with open(report, encoding="utf-8") as listed:
                for name in json.load(listed):
                    if name not in sys.modules and name != "__main__":
                        try:
                            importlib.import_module(name)
                        except Exception:  # noqa: BLE001 - a module only its importer can load
                            pass
        for name in [n for n, m in sys.modules.items() if _is_project(m, self.roots)]:
            del sys.modules[name]  # a third-party module may have imported one: children import afresh
        return passed, seconds

    @staticmethod
    def wait(pid: int, timeout: float | None) -> tuple[bool, float]:
        """Wait for the child ``pid``; past ``timeout`` seconds its process group is killed (a
        failed run). (passed, seconds)."""
        start = time.monotonic()
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - start
            if done:
                return os.waitstatus_to_exitcode(status) == 0, elapsed
            if timeout is not None and elapsed > timeout:
                _kill_group(pid)
                os.waitpid(pid, 0)
                return False, elapsed
            time.sleep(0.02)

    def run_all(self, numbered: list[tuple[int, Mutant]], timeout: float) -> Iterator[tuple[int, Mutant, bool]]:
        """Each mutant in its own child, one child per worker at a time; yields (n, mutant,
        passed) in the order given."""
        pending = list(numbered)
        free = list(self.workers)
        running: dict[int, tuple[Worker, int, Mutant, float]] = {}
        finished: dict[int, tuple[int, Mutant, bool]] = {}
        order = [n for n, _ in numbered]
        try:
            while pending or running:
                while pending and free:
                    n, mutant = pending.pop(0)
                    worker = free.pop()
                    worker.write(mutant, mutated_source(mutant))
                    try:
                        pid = self.start(worker)
                    except BaseException:
                        worker.write(mutant, mutant.source)
                        raise
                    running[pid] = (worker, n, mutant, time.monotonic())
                for pid, (worker, n, mutant, began) in list(running.items()):
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if not done and time.monotonic() - began > timeout:
                        _kill_group(pid)
                        os.waitpid(pid, 0)
                        done, status = pid, 1 << 8
                    if done:
                        del running[pid]
                        worker.write(mutant, mutant.source)
                        free.append(worker)
                        finished[n] = (n, mutant, os.waitstatus_to_exitcode(status) == 0)
                while order and order[0] in finished:
                    yield finished.pop(order.pop(0))
                if running:
                    time.sleep(0.02)
        finally:
            for pid, (worker, _, mutant, _) in running.items():
                _kill_group(pid)
                os.waitpid(pid, 0)
                worker.write(mutant, mutant.source)


def _kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (a ``--fork`` child and what it started)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="the module's source files (under src/)")
    parser.add_argument("-t", "--tests", nargs="+", required=True, help="the module's own test files")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="parallel workers (default 1; at most 2 here)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3 x the unmutated run + 10)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--fork", action="store_true",
                        help="fork each test run from one process that has imported pytest and the dependencies")
    parser.add_argument("--only", type=int, nargs="+", metavar="N", help="run only the mutants with these numbers")
    args = parser.parse_args(argv)
    files = [os.path.abspath(f) for f in args.files]
    for f in files:
        if not f.startswith(SRC + os.sep) or not f.endswith(".py"):
            parser.error(f"{f}: not a Python file under {SRC}")
    every = [m for f in files for m in mutants(f)]
    numbered = list(enumerate(every, start=1))
    if args.only is not None:
        numbered = [numbered[n - 1] for n in args.only]
    if args.list:
        for n, m in numbered:
            print(f"{n:4} {os.path.relpath(m.path, REPO)}:{m.line}: {m.what}")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the copies are removed
    workers = [Worker(args.tests) for _ in range(max(1, args.jobs))]
    try:
        for w in workers:
            w.pin(every)
        forker = Forker(workers) if args.fork else None
        if forker is not None:
            forker.warm()  # a first run that loads the dependencies; the second is timed as the mutants will be
            ok, seconds = forker.wait(forker.start(workers[0]), None)
        else:
            ok, seconds = workers[0].run(None, None)
        if not ok:
            if forker is not None and os.path.exists(workers[0].log):
                sys.stderr.write(open(workers[0].log, encoding="utf-8", errors="replace").read()[-4000:])
            print("the tests fail without any mutation: fix them first", file=sys.stderr)
            return 2
        timeout = args.timeout or 3 * seconds + 10
        print(f"{len(numbered)} mutants; the unmutated tests take {seconds:.1f} s", flush=True)
        if forker is not None:
            results: Iterator[tuple[int, Mutant, bool]] = forker.run_all(numbered, timeout)
            return _report(numbered, results)
        free = list(workers)

        def one(item: tuple[int, Mutant]) -> tuple[int, Mutant, bool]:
            worker = free.pop()
            try:
                return item[0], item[1], worker.run(item[1], timeout)[0]
            finally:
                free.append(worker)

        with concurrent.futures.ThreadPoolExecutor(len(workers)) as pool:
            return _report(numbered, pool.map(one, numbered))
    finally:
        for w in workers:
            w.close()


def _report(numbered: list[tuple[int, Mutant]], results: Iterator[tuple[int, Mutant, bool]]) -> int:
    """Print each survivor as it comes, progress every 10 mutants and the ``killed K/T``
    summary; the exit status (0: every mutant killed)."""
    survived = []
    for done, (n, m, passed) in enumerate(results, start=1):
        if passed:
            survived.append((n, m))
            print(f"SURVIVED {n:4} {os.path.relpath(m.path, REPO)}:{m.line}: {m.what}", flush=True)
        if done % 10 == 0 and done < len(numbered):
            print(f"... {done - len(survived)}/{done} killed so far", flush=True)
    killed = len(numbered) - len(survived)
    print(f"killed {killed}/{len(numbered)} ({100 * killed / max(1, len(numbered)):.0f}%)")
    return 0 if not survived else 1


if __name__ == "__main__":
    sys.exit(main())

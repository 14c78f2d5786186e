"""Replaying a git checkout's history as editing-face calls (docs/design/EDITING-FACES-DESIGN.md
§5): each commit's child files rebuilt from its parent in the three forms of
``dsh_fs.testing.commits``, on the pure engine (``through="engine"``) or through the tools, the
adapters and a real provider (``through="tools"``, ``dsh_fs.testing.commit_tools``), and
compared byte for byte.

Command line: ``python -m dsh_fs.testing.commit_replay CHECKOUT [--rev REV] [--max-count N]
[--through engine|tools]`` replays the history of any git checkout and prints what was checked,
skipped and failed (exit 1 on a failure).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .commit_tools import apply_forms_through_tools, local_provider
from .commits import Delta, Skipped, Tree, apply_codex, apply_editor, apply_responses, codex_patch, commit_deltas
from .commits import editor_calls, expected_tree, git, parent_tree, responses_operations

__all__ = ("Report", "main", "replay_commit")


@dataclass(slots=True)
class Report:
    """What a replay checked."""

    commits: int = 0
    checked: Counter[str] = field(default_factory=Counter)
    """form → files rebuilt byte for byte"""
    skipped: Counter[str] = field(default_factory=Counter)
    """reason → files"""
    failures: list[str] = field(default_factory=list)


def _engine_forms(deltas: Sequence[Delta]) -> dict[str, tuple[Tree | Exception, Skipped]]:
    """Each form applied by the pure engine: form → (the resulting tree or the failure, skips)."""
    tree = parent_tree(deltas)
    patch, skipped_codex = codex_patch(deltas)
    operations, skipped_responses = responses_operations(deltas)
    calls, skipped_editor = editor_calls(deltas)
    forms: list[tuple[str, Skipped, Any]] = [
        ("codex", skipped_codex, lambda: apply_codex(tree, patch) if patch else dict(tree)),
        ("responses", skipped_responses, lambda: apply_responses(tree, operations)),
        ("editor", skipped_editor, lambda: apply_editor(tree, calls)),
    ]
    out: dict[str, tuple[Tree | Exception, Skipped]] = {}
    for form, skipped, run in forms:
        try:
            out[form] = (run(), skipped)
        except Exception as exc:  # noqa: BLE001 - every failure is reported with its commit
            out[form] = (exc, skipped)
    return out


def replay_commit(repo: Path, commit: str, report: Report, *, through: Literal["engine", "tools"] = "engine",
                  provider: Any = None) -> None:
    """Rebuild ``commit``'s child files from its parent in the three forms; record the outcome.

    :param through: ``engine``: the pure engine on in-memory trees; ``tools``: the registry and
        the adapters on a real provider (``commit_tools``)
    :param provider: with ``tools``, a ``commit_tools.ProviderFactory`` (default: local disk)
    """
    deltas = commit_deltas(repo, commit)
    report.commits += 1
    if not deltas:
        return
    if through == "tools":
        results = apply_forms_through_tools(deltas, provider=provider or local_provider)
    else:
        results = _engine_forms(deltas)
    for form, (got, skipped) in results.items():
        for _, reason in skipped:
            report.skipped[f"{form}: {reason}"] += 1
        if isinstance(got, Exception):
            report.failures.append(f"{commit[:12]} {form}: {type(got).__name__}: {got}")
            continue
        want = expected_tree(deltas, skipped)
        if got != want:
            wrong = sorted(p for p in set(got) | set(want) if got.get(p) != want.get(p))
            report.failures.append(f"{commit[:12]} {form}: differs in {', '.join(wrong)}")
        else:
            report.checked[form] += len(deltas) - len(skipped)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dsh_fs.testing.commit_replay CHECKOUT [--rev REV] [--max-count N] [--through engine|tools]``."""
    parser = argparse.ArgumentParser(prog="python -m dsh_fs.testing.commit_replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--max-count", type=int, default=200)
    parser.add_argument("--through", choices=("engine", "tools"), default="engine",
                        help="engine: the pure patch engine; tools: the registry and adapters on the local disk")
    args = parser.parse_args(argv)
    commits = git(args.checkout, "rev-list", f"--max-count={args.max_count}", args.rev).decode().split()
    report = Report()
    for commit in commits:
        replay_commit(args.checkout, commit, report, through=args.through)
    print(f"commits: {report.commits}")
    for form, count in sorted(report.checked.items()):
        print(f"rebuilt byte for byte ({form}): {count} files")
    for reason, count in sorted(report.skipped.items()):
        print(f"skipped ({reason}): {count}")
    for failure in report.failures:
        print(f"FAILED {failure}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())

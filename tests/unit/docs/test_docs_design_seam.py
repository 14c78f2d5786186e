"""docs/design/EDITING-FACES-DESIGN.md's seam sketch (section 6.1): each printed signature of
``delete`` and ``rename`` is the abstract method of ``dsh_fs.fs.FileSystem`` (the same
parameters in the same order, of the same kinds, with the same defaults, and the annotations
the sketch prints). The sketch has no bodies: each line is parsed with ``: ...`` appended."""

from __future__ import annotations

import ast
import inspect

from docskit import DOCS, code_blocks
from dsh_fs.fs import FileSystem

PAGE = DOCS / "design" / "EDITING-FACES-DESIGN.md"
HEADING = "### 6.1 Seam: `delete` and `rename` (`dsh_fs.fs`, every provider, the contract suite)"


def test_the_printed_seam_signatures_are_the_code() -> None:
    [block] = code_blocks(HEADING, PAGE, "python")
    printed = [ast.parse(line + ": ...").body[0] for line in block.splitlines() if line.strip()]
    assert [node.name for node in printed] == ["delete", "rename"]  # type: ignore[attr-defined]
    for node in printed:
        assert isinstance(node, ast.AsyncFunctionDef)
        real = inspect.signature(getattr(FileSystem, node.name))
        assert inspect.iscoroutinefunction(getattr(FileSystem, node.name))
        args = node.args
        shown = [(arg.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD) for arg in args.args]
        shown += [(arg.arg, inspect.Parameter.KEYWORD_ONLY) for arg in args.kwonlyargs]
        assert shown == [(name, param.kind) for name, param in real.parameters.items()], node.name
        defaults = dict(zip([arg.arg for arg in args.args][-len(args.defaults):], args.defaults, strict=True))
        defaults.update({arg.arg: default for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                         if default is not None})
        for name, param in real.parameters.items():
            if name in defaults:
                assert param.default == ast.literal_eval(defaults[name]), (node.name, name)
            else:
                assert param.default is inspect.Parameter.empty, (node.name, name)
        for arg in [*args.args, *args.kwonlyargs]:
            if arg.annotation is not None:
                assert ast.unparse(arg.annotation) == _annotation(real.parameters[arg.arg]), (node.name, arg.arg)
        assert node.returns is not None and ast.unparse(node.returns) == _annotation(real, returns=True)


def _annotation(what: inspect.Parameter | inspect.Signature, *, returns: bool = False) -> str:
    """The annotation as the source spells it (``from __future__ import annotations``: a string)."""
    value = what.return_annotation if returns else what.annotation  # type: ignore[union-attr]
    return value if isinstance(value, str) else inspect.formatannotation(value)

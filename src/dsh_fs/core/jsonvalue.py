"""JSON-value checks, JavaScript's reading of JSON numbers and its number formatting
(REFERENCE-SPEC §5.3, §9 items 10–11; docs/JSON-NUMBERS.md).

Pure: no I/O. ``is_lossless_json`` is iterative, so hostile nesting depth cannot raise
``RecursionError``.

Python's ``json`` and JavaScript's ``JSON.parse`` read some number literals differently;
``parse_json`` and ``js_numbers`` read them as the reference does (docs/JSON-NUMBERS.md):

* ``-0`` (an integer literal): JavaScript's negative zero, which the registry's lossless
  check refuses (``tool execution arguments must be losslessly JSON-serializable``); Python
  reads the integer 0.
* an integer beyond 2**53: JavaScript's nearest double (``12345678901234567890`` is
  ``12345678901234567000``); Python keeps every digit. Beyond the largest double (or 4300
  digits, Python's limit): JavaScript's ``Infinity``, refused by the lossless check.
* ``NaN``, ``Infinity``: not JSON for ``JSON.parse``; Python's ``json`` accepts them.
* ``1.0``, ``1e2``, ``-0.0``, ``1e400``, ``1e-400`` and every other literal with a fraction
  or an exponent: the same double in both (both round correctly).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = (
    "JSON_ARGS_ERROR",
    "is_lossless_json",
    "js_number_str",
    "js_numbers",
    "may_rewrite",
    "parse_json",
    "read_noting_numbers",
    "well_formed",
)

_SAFE_INTEGER = 2**53
_CANDIDATES = re.compile(r"-0(?![0-9.eE])|[0-9]{16,}")
"""text where ``js_numbers`` may have something to change (it may also occur inside a string)"""


def may_rewrite(text: str) -> bool:
    """Whether ``js_numbers`` may change something in the JSON ``text``: a ``-0`` or a run of
    16 digits or more anywhere in it (inside a string too, so ``False`` is the sure answer).
    A reader's quick test: ``mcp.wire.classify`` looks at the literals themselves only when it
    says ``True``."""
    return _CANDIDATES.search(text) is not None


def read_noting_numbers(text: str) -> tuple[Any, bool, bool]:
    """``text`` read as ``json.loads`` reads it, its number literals looked at one by one:
    ``(value, rewritten, floats)``. ``rewritten``: an integer literal is one ``js_numbers`` may
    rewrite (``-0``, 16 digits or more; the same characters inside a string do not count, as
    they do for :func:`may_rewrite`). ``floats``: a literal has a fraction or an exponent, or
    is ``NaN``/``Infinity``.

    :raises ValueError: ``text`` is not JSON Python reads
    :raises RecursionError: nested too deep
    """
    rewritten = floats = False

    def integer(literal: str) -> int:
        nonlocal rewritten
        if _CANDIDATES.search(literal):  # the literal itself: -0, or 16 digits or more
            rewritten = True
        return int(literal)

    def number(literal: str) -> float:
        nonlocal floats
        floats = True
        return float(literal)

    value = json.loads(text, parse_int=integer, parse_float=number, parse_constant=number)
    return value, rewritten, floats


def _js_integer(literal: str) -> int | float:
    """An integer literal as ``JSON.parse`` reads it: an exact ``int`` up to 2**53, else the
    double JavaScript gets (``-0.0`` for ``-0``; ``inf`` beyond the largest double)."""
    if literal == "-0":
        return -0.0
    if len(literal) <= 16:
        value = int(literal)
        if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
            return value
    return float(literal)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str | bytes) -> Any:
    """``JSON.parse(text)`` in Python values: numbers as JavaScript reads them (see the module
    docstring), ``NaN``/``Infinity`` refused; objects keep the last of duplicate keys.

    :raises ValueError: not JSON (``json.JSONDecodeError`` included)
    :raises RecursionError: nested too deep for Python's parser
    """
    return json.loads(text, parse_int=_js_integer, parse_constant=_not_json)


class _IntegerLiteral(str):
    """An integer literal as written (``js_numbers`` decides how to read it by where it is)."""


def _settle(node: Any, path: tuple[str, ...], js: bool) -> tuple[Any, bool]:
    """``node`` with its integer literals read (JavaScript's way below ``path``), and whether
    that differs from Python's reading."""
    if isinstance(node, _IntegerLiteral):
        python = int(node)
        if not js:
            return python, False
        value = _js_integer(node)
        return value, type(value) is not int
    if isinstance(node, list):
        pairs = [_settle(item, (), js) for item in node]
        return [v for v, _ in pairs], any(c for _, c in pairs)
    if isinstance(node, dict):
        out, changed = {}, False
        for key, item in node.items():
            deeper = bool(path) and key == path[0]
            out[key], differs = _settle(item, path[1:] if deeper else (), js or (deeper and len(path) == 1))
            changed = changed or differs
        return out, changed
    return node, False


def js_numbers(text: str, *, within: tuple[str, ...] = ("params", "arguments")) -> str:
    """``text`` (a JSON document: a JSON-RPC message) with the number literals of its
    ``within`` member (a tool call's arguments) rewritten so that Python's JSON parsers
    (``json``, pydantic's) read them as ``JSON.parse`` does: ``-0`` becomes ``-0.0`` and an
    integer beyond 2**53 its double. Other members (a request ``id``) keep every digit.

    :return: ``text`` itself when there is nothing to rewrite, or when it is not JSON Python
        can read (the caller's parser then answers for it); ``NaN`` and ``Infinity`` are left
        to that parser too
    """
    if not _CANDIDATES.search(text):
        return text
    try:
        value, changed = _settle(json.loads(text, parse_int=_IntegerLiteral), within, not within)
    except (ValueError, RecursionError):
        return text
    return json.dumps(value, separators=(",", ":")) if changed else text

JSON_ARGS_ERROR = "tool execution arguments must be losslessly JSON-serializable"


def _flat_lossless(value: dict[object, object]) -> bool:
    """Is every key a ``str`` and every value a ``str``, ``bool``, ``None`` or an ``int`` well
    inside the double range? (``False`` only means: ask the full walk.)"""
    for key, item in value.items():
        if type(key) is not str:
            return False
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int and -(1 << 53) <= item <= (1 << 53):  # type: ignore[operator]
            continue
        return False
    return True


def is_lossless_json(value: object) -> bool:
    """``True`` when ``value`` round-trips through JSON exactly as the reference requires.

    Accepted: ``None``, ``bool``, ``int``, finite ``float`` other than ``-0.0``, ``str``,
    ``list`` and ``dict`` with ``str`` keys, without cycles. Rejected: NaN, ±Infinity, -0.0,
    tuples, sets, bytes, custom objects, non-string keys, cycles (§5.3 step 1).

    A flat object of strings, booleans, ``None`` and small integers (the usual tool
    arguments) is answered in one pass over its items; anything else takes the full walk.
    """
    if type(value) is dict and _flat_lossless(value):
        return True
    stack: list[object] = [value]
    on_path: set[int] = set()
    exits: list[tuple[int, int]] = []  # (stack length at which to leave, id)
    while stack:
        while exits and len(stack) <= exits[-1][0]:
            on_path.discard(exits.pop()[1])
        item = stack.pop()
        if item is None or isinstance(item, (bool, str)):
            continue
        if isinstance(item, int):
            if type(item) is not int:
                return False
            if item.bit_length() > 1023:  # near or beyond the largest double
                try:
                    float(item)
                except OverflowError:  # JSON.parse gives ±Infinity
                    return False
            continue
        if isinstance(item, float):
            if type(item) is not float or not math.isfinite(item):
                return False
            if item == 0.0 and math.copysign(1.0, item) < 0:
                return False
            continue
        if type(item) is list or type(item) is dict:
            ident = id(item)
            if ident in on_path:
                return False
            children: list[object]
            if type(item) is dict:
                if not all(type(k) is str for k in item):  # type: ignore[union-attr]
                    return False
                children = list(item.values())  # type: ignore[union-attr]
            else:
                children = list(item)  # type: ignore[arg-type]
            on_path.add(ident)
            exits.append((len(stack), ident))
            stack.extend(children)
            continue
        return False
    return True


def js_number_str(value: int | float) -> str:
    """Format a number as JavaScript's ``String(number)`` does (``2.0`` → ``2``, ``1e21`` → ``1e+21``).

    Integers are first rounded to a double, as the reference only ever sees doubles.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    f = float(value) if not isinstance(value, float) else value
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0:
        return "0"
    if f.is_integer() and abs(f) < 2**53:  # exact; beyond, JS prints shortest digits + zeros
        return str(int(f))
    sign = "-" if f < 0 else ""
    r = repr(abs(f))
    mantissa, _, exp_text = r.partition("e")
    exp = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # position of the decimal point relative to the start of `digits`
    lead_zeros = len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    point = len(int_part) + exp - lead_zeros
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    n = point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp_str = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp_str
    return sign + digits[0] + "." + digits[1:] + "e" + exp_str


def well_formed(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (valid pairs are joined), as
    JavaScript's UTF-8 encoder does — so it always encodes as UTF-8 (REFERENCE-SPEC §2.8 notes,
    §9 item 5). Returns ``text`` itself when it is already well formed."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

"""JSON-value checks and JavaScript number formatting (REFERENCE-SPEC §5.3, §9 items 10–11).

Pure: no I/O. Iterative, so hostile nesting depth cannot raise ``RecursionError``.
"""

from __future__ import annotations

import math

__all__ = (
    "JSON_ARGS_ERROR",
    "is_lossless_json",
    "js_number_str",
    "well_formed",
)

JSON_ARGS_ERROR = "tool execution arguments must be losslessly JSON-serializable"


def is_lossless_json(value: object) -> bool:
    """``True`` when ``value`` round-trips through JSON exactly as the reference requires.

    Accepted: ``None``, ``bool``, ``int``, finite ``float`` other than ``-0.0``, ``str``,
    ``list`` and ``dict`` with ``str`` keys, without cycles. Rejected: NaN, ±Infinity, -0.0,
    tuples, sets, bytes, custom objects, non-string keys, cycles (§5.3 step 1).
    """
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
            if item.bit_length() > 1024:  # beyond a double: JSON.parse gives ±Infinity
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

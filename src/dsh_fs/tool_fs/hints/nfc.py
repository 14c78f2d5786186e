"""Stage 6: NFC vs NFD (DEVIATIONS D5). Pure, stdlib only."""

from __future__ import annotations

import unicodedata

from .chars import EXAMPLE_SCAN_LIMIT, code_points, quote, unnormalized_cluster
from .state import STEP, Ctx

__all__ = ("stage_nfc",)

def stage_nfc(ctx: Ctx) -> str | None:
    """Match after NFC on both sides; name a decomposed character as an example when possible."""
    content, needle = ctx.content, ctx.needle
    if content.isascii() and needle.isascii():
        return None
    if not ctx.pay(len(content) + STEP * EXAMPLE_SCAN_LIMIT):  # the example scan is a Python loop
        return None
    if unicodedata.is_normalized("NFC", content) and unicodedata.is_normalized("NFC", needle):
        return None
    norm_needle = unicodedata.normalize("NFC", needle)
    if not norm_needle.strip():
        return None
    norm_content = ctx.pass_over(lambda: unicodedata.normalize("NFC", content))
    if norm_content is None:
        return None
    idx = norm_content.find(norm_needle)
    if idx < 0 or not ctx.pay(len(content)):
        return None
    first = norm_content.count("\n", 0, idx) + 1
    region = "\n".join(ctx.lines[first - 1 : first + needle.count("\n")])
    file_dec = not unicodedata.is_normalized("NFC", region)
    needle_dec = not unicodedata.is_normalized("NFC", needle)
    intro = f"Hint: line {first} matches after Unicode normalization (NFC)"
    if file_dec and not needle_dec:
        cluster = unnormalized_cluster(region, norm_needle)
        if cluster is not None:
            composed = unicodedata.normalize("NFC", cluster)
            return (
                f"{intro}: the file writes {quote(composed)} as {code_points(cluster)} (decomposed), "
                f"old_string as {code_points(composed)} (composed)."
            )
    elif needle_dec and not file_dec:
        cluster = unnormalized_cluster(needle, None)
        if cluster is not None:
            composed = unicodedata.normalize("NFC", cluster)
            return (
                f"{intro}: old_string writes {quote(composed)} as {code_points(cluster)} (decomposed), "
                f"the file as {code_points(composed)} (composed)."
            )
    return f"{intro}: the file and old_string encode some accented characters differently."

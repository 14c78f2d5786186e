"""JSON numbers as the reference reads them (tracker issue 13, item 4; docs/JSON-NUMBERS.md).

* ``core.jsonvalue.parse_json`` against Node's ``JSON.parse`` itself, followed by the
  registry's lossless check (finite, not negative zero) and JavaScript's ``String(number)``,
  for every kind of literal (skipped without ``node``).
* ``js_numbers``: what Python's parsers read from the rewritten text is what ``JSON.parse``
  reads from the original (hypothesis, random documents), and text without such a literal
  is returned as is.
* ``mcp.http.js_numbers.JsNumbers``: the ASGI wrapper rewrites POST bodies only, keeps
  ``content-length`` right, and passes everything else through.

Entry points end to end: the adapters (tests/unit/adapters/test_adapters.py), the CLI and replay
(tests/e2e/cli/test_cli.py), MCP stdio (tests/e2e/mcp/test_mcp_wire.py).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.core.jsonvalue import is_lossless_json, js_number_str, js_numbers, may_rewrite, parse_json, read_noting_numbers
from dsh_fs.mcp.http.js_numbers import JsNumbers

LITERALS = [
    "0", "-0", "-0.0", "0.0", "-0e0", "-0E+3", "1", "-1", "1.0", "2.50", "1e2", "1E2", "1e+2", "1e-2", "100e-2",
    "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993", "12345678901234567890",
    "123456789012345678901234567890", "1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1e309",
    "-1e400", "1e-400", "-1e-400", "5e-324", "1" + "0" * 308, "1" + "0" * 309, "9" * 5000,
    str(2**1024 - 2**970), str(2**1024 - 2**970 - 1),
    "NaN", "Infinity", "-Infinity", "01", "1.", ".5", "+1", "0x10", "-",
]

NODE = shutil.which("node")


def ours(literal: str) -> list[Any]:
    """[parsed?, lossless?, String(value)] — what the registry sees after parsing."""
    try:
        value = parse_json(literal)
    except ValueError:
        return [False, None, None]
    return [True, is_lossless_json(value), js_number_str(value)]


@pytest.mark.skipif(NODE is None, reason="node is not installed: no JavaScript to compare with")
def test_parse_json_reads_every_literal_as_json_parse_does() -> None:
    script = (
        "const out = JSON.parse(require('fs').readFileSync(0, 'utf8')).map((t) => {"
        "  let v; try { v = JSON.parse(t) } catch { return [false, null, null] }"
        "  return [true, Number.isFinite(v) && !Object.is(v, -0), String(v)] });"
        "process.stdout.write(JSON.stringify(out))"
    )
    done = subprocess.run([NODE, "-e", script], input=json.dumps(LITERALS), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for literal, expected in zip(LITERALS, json.loads(done.stdout)):
        assert ours(literal) == expected, literal


def test_parse_json_values() -> None:
    assert math.copysign(1, parse_json("-0")) == -1 and parse_json("-0") == 0
    assert parse_json("[1.0, 1e2, 9007199254740993]") == [1, 100, 9007199254740992]
    assert type(parse_json("9007199254740993")) is float and type(parse_json("9007199254740992")) is int
    assert parse_json("1" + "0" * 5000) == math.inf  # beyond Python's int digit limit too
    for text in ("NaN", "[Infinity]", "-Infinity"):
        with pytest.raises(ValueError):
            parse_json(text)


def test_lossless_check_matches_the_double_range() -> None:
    assert is_lossless_json(2**1024 - 2**970 - 1)  # rounds to the largest double
    assert not is_lossless_json(2**1024 - 2**970)  # rounds to Infinity
    assert not is_lossless_json(-(2**1024))


numbers = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from(["-0", "-0.0", "1e400", "-1e400", "12345678901234567890", "1E2"]))
documents = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)),
    max_leaves=12,
)


def render(value: Any) -> str:
    """A JSON document; strings from ``numbers`` are written as raw number literals."""
    if isinstance(value, str) and value in ("-0", "-0.0", "1e400", "-1e400", "12345678901234567890", "1E2"):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {render(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values, telling -0.0 from 0 and ints from floats apart only by value."""
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
                and a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


@settings(max_examples=300, deadline=None, database=None)
@given(document=documents)
def test_python_parsers_read_the_rewritten_text_as_json_parse_reads_the_original(document: Any) -> None:
    import pydantic_core

    text = render(document)
    expected = json.loads(text, parse_int=lambda s: parse_json(s))  # parse_json of each integer literal
    rewritten = js_numbers(text, within=())  # the whole document
    assert same(json.loads(rewritten), expected)
    assert same(pydantic_core.from_json(rewritten, allow_inf_nan=True), expected)


def test_only_the_arguments_are_read_as_javascript_does() -> None:
    """A request id beyond 2**53 must come back exactly as the client sent it."""
    text = ('{"jsonrpc": "2.0", "id": 12345678901234567890, "method": "tools/call", '
            '"params": {"name": "read", "arguments": {"offset": -0, "limit": [12345678901234567890]}, "x": -0}}')
    value = json.loads(js_numbers(text))
    assert value["id"] == 12345678901234567890 and value["params"]["x"] == 0
    assert str(value["params"]["arguments"]["offset"]) == "-0.0"
    assert value["params"]["arguments"]["limit"] == [12345678901234567168.0]


def test_text_without_such_literals_is_returned_as_is() -> None:
    plain = '{"params": {"arguments": {"offset": 12, "x": [1.5, -3], "y": -0.5, "z": 1e2}}}'
    assert js_numbers(plain) is plain
    assert js_numbers("not json -0") == "not json -0"
    text = '{"params": {"arguments": {"x": "-0 inside a string", "id": "1234567890123456789"}}}'
    assert js_numbers(text) is text  # looks like one, but is a string
    huge_id = '{"jsonrpc":"2.0","id":1' + "0" * 5000 + ',"method":"ping"}'  # Python's parser answers for it
    assert js_numbers(huge_id) is huge_id


# -- the HTTP transport's wrapper -------------------------------------------------------------

def run_wrapper(method: str, chunks: list[bytes]) -> tuple[dict[str, Any], bytes]:
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        seen["scope"], seen["body"] = scope, body

    async def main() -> None:
        queue = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]

        async def receive() -> dict[str, Any]:
            return queue.pop(0)

        scope = {"type": "http", "method": method, "headers": [(b"content-length", b"999"), (b"x", b"y")]}
        await JsNumbers(app)(scope, receive, None)

    anyio.run(main)
    return seen["scope"], seen["body"]


def test_post_bodies_are_rewritten_and_their_length_follows() -> None:
    scope, body = run_wrapper("POST", [b'{"params": {"arguments": {"offset"', b": -0}}}"])
    assert body == b'{"params":{"arguments":{"offset":-0.0}}}'
    assert dict(scope["headers"]) == {b"content-length": str(len(body)).encode(), b"x": b"y"}
    scope, body = run_wrapper("POST", [b'{"offset": 1}'])
    assert body == b'{"offset": 1}'
    _, body = run_wrapper("POST", [b'{"params": {"arguments": {"bad": "\xff", "o": -0}}}'])  # not UTF-8
    assert body == b'{"params": {"arguments": {"bad": "\xff", "o": -0}}}'
    scope, body = run_wrapper("GET", [b"-0"])
    assert body == b"-0" and dict(scope["headers"])[b"content-length"] == b"999"


@pytest.mark.parametrize(("text", "rewritten", "floats"), [
    ('{"p":"/tmp/pytest-0/a","q":"12345678901234567890"}', False, False),  # inside strings: nothing
    ('{"p":"-0","n":-0}', True, False),
    ('[1234567890123456]', True, False),
    ('[-123456789012345]', False, False),  # 15 digits
    ('[0.5,"-0"]', False, True),
    ('[1e2]', False, True),
    ('[NaN]', False, True),
    ('{"a":-0,"b":-0.0}', True, True),
])
def test_read_noting_numbers_looks_at_literals_not_strings(text: str, rewritten: bool, floats: bool) -> None:
    value, seen_rewritten, seen_floats = read_noting_numbers(text)
    assert (seen_rewritten, seen_floats) == (rewritten, floats)
    assert json.dumps(value) == json.dumps(json.loads(text))


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(alphabet="-0123456789a", max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=8))
def test_read_noting_numbers_says_rewritten_exactly_when_js_numbers_may_change_a_literal(value: Any) -> None:
    """Over documents of integers and digit-laden strings: ``rewritten`` only where the quick
    test also says maybe, and exactly when an integer literal is ``-0`` or has 16+ digits."""
    text = json.dumps(value)
    _, rewritten, floats = read_noting_numbers(text)
    literals: list[int] = []

    def collect(item: Any) -> None:
        if type(item) is int:
            literals.append(item)
        elif isinstance(item, list):
            for inner in item:
                collect(inner)
        elif isinstance(item, dict):
            for inner in item.values():
                collect(inner)

    collect(value)
    assert not floats
    assert rewritten == any(len(str(abs(n))) >= 16 for n in literals)
    assert may_rewrite(text) or not rewritten

"""``smolagents_inputs``: a JSON schema as smolagents ``inputs`` changes nothing but the
``nullable`` marks (hypothesis over generated schemas, and the registry's own)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from smolagents.models import get_tool_json_schema

import dsh_fs
from dsh_fs.adapters.smolagents import DshFsToolCollection, smolagents_inputs

_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_PROPERTY = st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "boolean", "number"]),
                                   "description": st.text(max_size=40)},
                                  optional={"minimum": st.integers(), "enum": st.lists(st.text(max_size=5), max_size=3)})


@st.composite
def _schemas(draw: Any) -> dict[str, Any]:
    properties = draw(st.dictionaries(_NAMES, _PROPERTY, max_size=6))
    required = [name for name in properties if draw(st.booleans())]
    return {"type": "object", "properties": properties, "required": required}


@settings(deadline=None)  # a loaded machine must not fail a pure check
@given(_schemas())
def test_only_optional_properties_gain_nullable(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    inputs = smolagents_inputs(schema)
    assert schema == before  # the schema itself is untouched
    assert list(inputs) == list(schema["properties"])
    for name, entry in inputs.items():
        rest = {k: v for k, v in entry.items() if k != "nullable"}
        assert rest == schema["properties"][name]
        assert ("nullable" in entry) == (name not in schema["required"])
        assert entry.get("nullable", True) is True


def test_smolagents_sends_the_registry_schema_with_only_the_nullable_marks() -> None:
    ctx = dsh_fs.create_context()
    collection = DshFsToolCollection(ctx)
    try:
        sent = {tool.name: get_tool_json_schema(tool)["function"] for tool in collection.tools}
    finally:
        collection.close()
    for schema in ctx.tools.schemas():
        function = sent[schema["name"]]
        assert function["description"] == schema["description"]
        parameters = copy.deepcopy(function["parameters"])
        for prop in parameters["properties"].values():
            prop.pop("nullable", None)
        expected = {"required": [], **schema["parameters"]}  # smolagents always sends the list (list has none)
        assert parameters == expected

"""The provider contract's shape (``dsh_fs.testing.contract``): per-primitive mixins composed into
``ProviderContract``, and optional ones a provider without the capability leaves out.

Covers: no contract test skips inside itself (a missing capability is a missing mixin); every
mixin the package exports is either in ``ProviderContract`` or one of the documented optional
ones; no test name is defined by two mixins (one would hide the other). Not covered: the tests
themselves (``tests/contract/test_contract.py`` runs them on every provider).
"""

from __future__ import annotations

import inspect
import pkgutil
from pathlib import Path

from dsh_fs.testing import contract
from dsh_fs.testing.contract.base import ContractBase

OPTIONAL = {"IdenticalRewriteContract", "ImplementedReadWindowContract", "WriteBytesContract"}


def _mixins() -> dict[str, type]:
    return {name: getattr(contract, name) for name in contract.__all__ if name != "ProviderContract"}


def test_no_contract_test_skips_inside() -> None:
    for info in pkgutil.iter_modules(contract.__path__):
        source = (Path(contract.__path__[0]) / f"{info.name}.py").read_text(encoding="utf-8")
        assert "pytest.skip(" not in source and "pytest.mark.skip" not in source, info.name


def test_provider_contract_composes_every_required_mixin() -> None:
    mixins = _mixins()
    assert all(issubclass(cls, ContractBase) for cls in mixins.values())
    required = {name for name, cls in mixins.items() if cls in contract.ProviderContract.__mro__}
    assert required == set(mixins) - OPTIONAL
    assert OPTIONAL <= set(mixins)
    assert all(name in (contract.__doc__ or "") for name in mixins)  # each is in the package's table


def test_no_test_is_defined_twice() -> None:
    seen: dict[str, str] = {}
    for name, cls in _mixins().items():
        for test, _ in inspect.getmembers(cls, inspect.isfunction):
            if test.startswith("test_") and test in vars(cls):
                assert test not in seen, f"{test}: {seen[test]} and {name}"
                seen[test] = name
    assert len(seen) >= 70

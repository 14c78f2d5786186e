"""The provider contract: pytest tests every ``FileSystem`` provider must pass.

Use it fsspec-style (``fsspec/tests/abstract/``): subclass ``ProviderContract`` — every required
mixin — with the optional mixins the provider's capabilities call for, and supply a
``workspace`` fixture that yields a fresh, empty ``dsh_fs.testing.Workspace`` (ready-made
ones: ``LocalWorkspace``, ``MemoryWorkspace``, ``S3Workspace``)::

    class TestMine(ProviderContract, IdenticalRewriteContract):
        @pytest.fixture
        async def workspace(self, tmp_path):
            ws = MyWorkspace(tmp_path)
            yield ws
            await ws.aclose()

A provider without an optional capability leaves its mixin out; no test skips inside.

| mixin | module | tests |
|---|---|---|
| ``SearchContract`` | ``search`` | ``walk`` with sizes and modification times, ``stream_bytes`` exact and binary-safe, ``host_path`` naming the same bytes where a provider has one |
| ``ResolveContract`` | ``resolve`` | cwd, absolute paths, spellings, blank paths, abort |
| ``StatContract`` | ``stat`` | ``stat``/``lstat``: types, versions, abort |
| ``ReadTextContract`` | ``read`` | ``read_text``/``stream_text``: the text rules, exact messages with and without DEVIATIONS D6 |
| ``ReadBytesContract`` | ``read`` | ``read_bytes`` (``read_image``'s raw read): whole and bounded, the reference's cap texts |
| ``ReadWindowContract`` | ``window`` | ``read_window``: ``None``, or exactly what windowing ``read_text``/``stream_text`` gives, errors included |
| ``ListDirContract`` | ``listing`` | ``list_dir`` |
| ``WriteTextContract`` | ``write`` | intents, exact messages, diff basis, D1/D2/D4 per profile, abort ordering, races |
| ``EditTextContract`` | ``edit`` | the same for ``edit_text``, D15 overlapping matches, D16 the size limit |
| ``DeleteContract``, ``RenameContract`` | ``delete``, ``rename`` | guards, exact messages, bytes moved unchanged, a destination never replaced, parents created, abort ordering, races |
| ``IsCurrentContract`` | ``current`` | ``is_current`` compares as the guards do |
| ``ReadTextAtContract`` | ``current`` | ``read_text_at``: the text of exactly the version asked for, else ``None``; ``read_text``'s errors |
| optional ``WriteBytesContract`` | ``write_bytes`` | ``write_bytes`` (a history rewind's write): exactly the bytes given, ``write_text``'s guards and messages, directories refused, abort (leave out for a provider without raw writes) |
| optional ``IdenticalRewriteContract`` | ``stat`` | rewriting the same bytes changes the version (leave out where the version is a content hash: an unversioned S3 bucket) |
| optional ``ImplementedReadWindowContract`` | ``window`` | a provider's own ``read_window`` validates exactly its own stream's chunks (leave out where ``read_window`` returns ``None``) |

The helpers the tests share are in ``base``. Covers the seam as REFERENCE-SPEC §1.3, §2 and §7.3
describe it, independent of the storage, and races between two provider instances over one
workspace (as two processes: one wins, the other is stale, nothing is lost). Every mutation is
checked by reading the storage back through the workspace, never by trusting the outcome alone.

Not covered: symlinks, modes, owners, FIFOs, the local provider's realpath identity and
cross-process lock files (``tests/integration/fs_local/test_local_provider.py``,
``tests/integration/fs_local/test_inline_mutations.py``, ``tests/robustness/fs_local/test_many_processes.py``), and
anything above the seam (tools, policy).
"""

from __future__ import annotations

from .current import IsCurrentContract as IsCurrentContract, ReadTextAtContract as ReadTextAtContract
from .delete import DeleteContract as DeleteContract
from .edit import EditTextContract as EditTextContract
from .listing import ListDirContract as ListDirContract
from .read import ReadBytesContract as ReadBytesContract, ReadTextContract as ReadTextContract
from .rename import RenameContract as RenameContract
from .resolve import ResolveContract as ResolveContract
from .search import SearchContract as SearchContract
from .stat import IdenticalRewriteContract as IdenticalRewriteContract, StatContract as StatContract
from .window import (
    ImplementedReadWindowContract as ImplementedReadWindowContract,
    ReadWindowContract as ReadWindowContract,
)
from .write import WriteTextContract as WriteTextContract
from .write_bytes import WriteBytesContract as WriteBytesContract

__all__ = (
    "DeleteContract",
    "EditTextContract",
    "IdenticalRewriteContract",
    "ImplementedReadWindowContract",
    "IsCurrentContract",
    "ListDirContract",
    "ProviderContract",
    "ReadBytesContract",
    "ReadTextAtContract",
    "ReadTextContract",
    "ReadWindowContract",
    "RenameContract",
    "ResolveContract",
    "SearchContract",
    "StatContract",
    "WriteBytesContract",
    "WriteTextContract",
)


class ProviderContract(
    SearchContract,
    ResolveContract,
    StatContract,
    ReadTextContract,
    ReadBytesContract,
    ReadWindowContract,
    ListDirContract,
    WriteTextContract,
    EditTextContract,
    DeleteContract,
    RenameContract,
    IsCurrentContract,
    ReadTextAtContract,
):
    """Every required mixin of the contract; requires a ``workspace`` fixture yielding an empty
    ``Workspace``. Add the optional mixins the provider's capabilities call for."""

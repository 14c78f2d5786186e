"""Test support for providers: the contract suite, workspaces, fixtures and a moto server.

* ``ProviderContract`` (``dsh_fs.testing.contract``) — pytest tests every provider passes;
  subclass it with a ``workspace`` fixture (needs pytest and anyio's pytest plugin).
* ``Workspace``, ``LocalWorkspace``, ``MemoryWorkspace``, ``S3Workspace`` — a provider plus
  direct access to its storage ("another process").
* ``dsh_fs.testing.fixtures`` — ``s3_endpoint`` and ready-made ``workspace`` mixins.
* ``dsh_fs.testing.moto_server`` — a moto S3 server on loopback (``start``/``stop`` CLI).
* ``dsh_fs.testing.snapshot`` — a byte-level snapshot of a directory tree (did a call
  change anything?).

Only the workspaces are imported here, so programs (``dsh-fs replay --provider s3``) can use
them without pytest; import the contract and fixtures from their modules.
"""

from .workspaces import (
    LocalWorkspace as LocalWorkspace,
    MemoryWorkspace as MemoryWorkspace,
    S3Workspace as S3Workspace,
    Workspace as Workspace,
)

__all__ = ("LocalWorkspace", "MemoryWorkspace", "S3Workspace", "Workspace")

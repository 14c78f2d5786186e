"""Sandbox modes over any provider (docs/SANDBOX.md): ``filesystem.SandboxedFileSystem`` (the
fence, a provider wrapper), ``approval`` (the escalation's approval), ``changes`` (the files an
escalated call changes, as its approval prompt names them), ``tools`` (the tool-layer
helper; it imports no provider), ``roots`` (the writable places on the host disk). The
modes are ``dsh_fs.fs.sandbox``, the escalation's texts ``dsh_fs.tool_common.sandbox_texts``
(both pure).

Import from the submodules: this package imports nothing, so a tool importing ``tools`` does
not load the wrapper.
"""

__all__: tuple[str, ...] = ()

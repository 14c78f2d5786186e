"""Path rules over any provider (docs/PATH-RULES.md): ``filesystem.RuledFileSystem`` (the
wrapper that refuses a denied path everywhere and a change of a read-only one), ``files``
(reading a rules file), ``prompt`` (the ``tool:path-rules`` section). The rules themselves and
their texts are ``dsh_fs.fs.path_rules`` (pure).

Import from the submodules: this package imports nothing.
"""

__all__: tuple[str, ...] = ()

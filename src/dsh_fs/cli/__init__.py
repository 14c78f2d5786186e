"""The ``dsh-fs`` command line; ``replay`` runs conformance scenarios.

The entry point is ``dsh_fs.cli.main:main``; each command lives in its own module. Nothing is
re-exported here, so importing the package imports no command (nor click).
"""

__all__ = ()

"""The ``dsh-fs`` command line; ``replay`` runs conformance scenarios.

The entry point is ``dsh_fs.cli.main:run`` (the click group ``main``, then a quick exit);
each command lives in its own module. Nothing is re-exported here, so importing the package
imports no command (nor click).
"""

__all__ = ()

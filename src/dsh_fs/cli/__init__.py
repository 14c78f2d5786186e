"""The ``dsh-fs`` command line; ``replay`` runs conformance scenarios."""

"""The harness-wide error base and the registry's own errors.

::

    HarnessError                 stable ``code`` + message; the registry reports {name, code}
     ├── ToolArgsError           INVALID_ARGS   <- schema validation (REFERENCE-SPEC §5.4)
     ├── ToolNotFoundError       UNKNOWN_TOOL   <- unknown or invisible tool (§5.2)
     └── FsError                 FS_*           <- dsh_fs.fs (the provider seam, §1.2)

    ToolInputError (ValueError)  plain   <- a tool's own value checks (§4.4 step 4)

Only ``HarnessError`` subclasses get an ``error: {name, code}`` on a failed tool result;
plain exceptions become code-less ``Error: <message>`` results (§5.2).
"""

from __future__ import annotations

__all__ = ("HarnessError", "ToolArgsError", "ToolInputError", "ToolNotFoundError")


class HarnessError(Exception):
    """An error with a stable machine code; ``str(err)`` is the model-facing message.

    :param message: the exact message text (no prefix is ever added)
    :param code: the stable code, e.g. ``"FS_NOT_FOUND"``
    :param cause: optional underlying exception, also chained as ``__cause__``
    """

    def __init__(self, message: str, code: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    @property
    def name(self) -> str:
        """The concrete class name (``"FsError"``, ``"ToolArgsError"``, …), as the reference reports it."""
        return type(self).__name__

    def __str__(self) -> str:
        return self.message


class ToolArgsError(HarnessError):
    """Raised by the registry when arguments violate a tool's schema (code ``INVALID_ARGS``, §5.4)."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("invalid arguments: " + "; ".join(violations), "INVALID_ARGS")
        self.violations = tuple(violations)


class ToolNotFoundError(HarnessError):
    """Raised by the registry for an unknown tool name (code ``UNKNOWN_TOOL``, §5.2)."""

    def __init__(self, name: str) -> None:
        super().__init__(f'unknown tool "{name}"', "UNKNOWN_TOOL")
        self.tool_name = name


class ToolInputError(ValueError):
    """A tool argument has the right JSON type but an unusable value (REFERENCE-SPEC §4.4 step
    4): a *plain* error, reported as ``Error: <message>`` without ``{name, code}`` (§5.2)."""

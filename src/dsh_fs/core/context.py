"""The kernel: plugin scopes, services and events (REFERENCE-SPEC §1.3, §1.4, §4.1).

A ``Context`` holds named services (``ctx.fs``, ``ctx.tools``, ``ctx.system_prompt``) and
event listeners. ``ctx.plugin(Plugin, **config)`` loads a plugin into its own ``Scope``;
everything the plugin registers through that scope (services, listeners, tools, prompt
sections) is removed again by ``scope.dispose()``. A plugin that declares ``inject`` stays
pending until those services exist, and goes back to pending when one is withdrawn.

Lifecycle: a disposer registered with ``scope.effect`` may be a coroutine function (a
provider's ``aclose``, which releases an HTTP client). ``await ctx.aclose()`` (or leaving
``async with ctx:``) disposes every scope and awaits those; ``await scope.adispose()`` does it
for one plugin. A plain ``dispose()`` cannot await: it runs the sync disposers at once and
keeps the async ones for the context's next ``aclose()``, so nothing is released twice or lost.

Events come in two dispatch modes:

* ``emit`` — synchronous fan-out; listener exceptions propagate to the emitter.
* ``waterfall`` — single slot, first registered listener decides; each listener gets a
  ``next`` coroutine function that runs the rest of the chain, ending in the default.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import inspect
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

import anyio

from .errors import HarnessError
from .profile import Profile
from .system_prompt import SystemPrompt
from .tools import ToolRegistry

__all__ = ("AsyncDisposer", "Context", "Disposer", "Plugin", "Scope", "ScopeState")

Disposer = Callable[[], None]
"""undoes one registration; runs when its scope is disposed or deactivated"""

AsyncDisposer = Callable[[], Awaitable[None]]
"""releases a resource (``FileSystem.aclose``); awaited by ``Scope.adispose`` / ``Context.aclose``"""


class Plugin(Protocol):
    """What ``ctx.plugin`` loads: a ``name``, optional ``inject`` and an ``apply``.

    ``apply(scope, **config)`` registers everything through ``scope`` and may raise to
    refuse loading (the scope is then disposed and the error propagates).
    """

    name: str

    def apply(self, scope: "Scope", /, **config: Any) -> None: ...


class ScopeState(enum.Enum):
    """Lifecycle of a loaded plugin."""

    PENDING = 1
    """waiting for an injected service"""
    ACTIVE = 2
    """applied; its registrations are live"""
    DISPOSED = 3
    """removed for good"""


class Scope:
    """The registrations of one loaded plugin; ``dispose()`` removes all of them.

    Services are read through attribute access (``scope.fs``), as on the context.
    """

    def __init__(self, ctx: "Context", plugin: Plugin, config: dict[str, Any]) -> None:
        self.ctx = ctx
        self.plugin = plugin
        self.config = config
        self.name: str = getattr(plugin, "name", getattr(plugin, "__name__", "plugin"))
        self.inject: tuple[str, ...] = tuple(getattr(plugin, "inject", ()) or ())
        self.state = ScopeState.PENDING
        self._disposers: list[Disposer] = []

    # -- registration helpers -------------------------------------------------------
    @property
    def profile(self) -> Profile:
        """The context's profile (DEVIATIONS.md)."""
        return self.ctx.profile

    def effect(self, disposer: Disposer | AsyncDisposer) -> Disposer | AsyncDisposer:
        """Run ``disposer`` when this scope is disposed or deactivated (last registered, first run).

        A coroutine function is awaited by ``adispose()`` or the context's ``aclose()``; a
        plain ``dispose()`` (or a deactivation) leaves it to the context's next ``aclose()``.
        """
        self._disposers.append(disposer)
        return disposer

    def on(self, event: str, listener: Callable[..., Any], *, prepend: bool = False) -> Disposer:
        """Register an event listener for the lifetime of this scope."""
        return self.effect(self.ctx.on(event, listener, prepend=prepend))

    def provide(self, name: str, service: object) -> None:
        """Provide a service for the lifetime of this scope.

        :raises HarnessError: ``DUPLICATE_SERVICE`` when ``name`` is already provided
        """
        self.effect(self.ctx._provide(name, service))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.ctx, name)

    # -- lifecycle ------------------------------------------------------------------
    def _deactivate(self) -> None:
        """Run the sync disposers (newest first); hand the async ones to the context."""
        disposers, self._disposers = self._disposers, []
        errors: list[BaseException] = []
        for disposer in reversed(disposers):
            if inspect.iscoroutinefunction(disposer):
                self.ctx._pending.append(disposer)
                continue
            try:
                result = disposer()
            except Exception as exc:  # keep disposing; report the first failure
                errors.append(exc)
                continue
            if inspect.isawaitable(result):  # a sync callable that returned a coroutine
                self.ctx._pending.append(result)
        if errors:
            raise errors[0]

    def dispose(self) -> None:
        """Remove every registration of this plugin (idempotent). Async disposers (a
        provider's ``aclose``) are left to ``ctx.aclose()``; ``adispose`` awaits them now."""
        if self.state is ScopeState.DISPOSED:
            return
        self.ctx._unload(self)

    async def adispose(self) -> None:
        """``dispose()``, then await every async disposer it (or a deactivation it caused)
        left pending, e.g. close the provider's HTTP client (idempotent).

        :raises Exception: the first disposer failure, after running all of them
        """
        self.dispose()
        await self.ctx._release()

    def __enter__(self) -> "Scope":
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        return f"<Scope {self.name} {self.state.name.lower()}>"


_SCOPED: contextvars.ContextVar[tuple[tuple["Context", str, object], ...]] = contextvars.ContextVar(
    "dsh_fs_scoped_services", default=()
)
"""``(context, name, service)`` set by ``Context.scoped`` for the current task (newest last)"""


class Context:
    """Services, events and loaded plugins of one deployment.

    The kernel services ``tools`` (a ``ToolRegistry``) and ``system_prompt`` (a
    ``SystemPrompt``) always exist; ``fs`` comes from a provider plugin.

    :param profile: ``"default"`` or ``"reference"`` (DEVIATIONS.md); read by every plugin
    :param persona: the ``deployment:persona`` prompt section (§4.2), empty by default
    """

    def __init__(self, *, profile: Profile | str | None = None, persona: str = "") -> None:
        self.profile = Profile.parse(profile)
        self._services: dict[str, object] = {}
        self._listeners: dict[str, list[Callable[..., Any]]] = {}
        self._scopes: list[Scope] = []
        self._pending: list[AsyncDisposer | Awaitable[None]] = []
        """async disposers of disposed scopes, not yet awaited (``aclose`` awaits them)"""
        self._services["tools"] = ToolRegistry()
        self._services["system_prompt"] = SystemPrompt(persona=persona)

    # -- services ---------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        scoped = _SCOPED.get()
        if scoped:
            for ctx, scoped_name, service in reversed(scoped):
                if ctx is self and scoped_name == name:
                    return service
        try:
            return self._services[name]
        except KeyError:
            raise AttributeError(f'no service "{name}" is provided') from None

    @contextlib.contextmanager
    def scoped(self, name: str, service: object) -> Iterator[None]:
        """Within the block, and in tasks started from it, ``ctx.<name>`` is ``service``
        (a context variable: other tasks keep the provided one). The MCP server serves one
        client's call through its narrowed provider view this way (a client that declares roots
        reaches only those, DEVIATIONS M3).

        :raises HarnessError: ``UNKNOWN_SERVICE`` when ``name`` is not provided
        """
        if name not in self._services:
            raise HarnessError(f'no service "{name}" is provided', "UNKNOWN_SERVICE")
        token = _SCOPED.set((*_SCOPED.get(), (self, name, service)))
        try:
            yield
        finally:
            _SCOPED.reset(token)

    def has(self, name: str) -> bool:
        """``True`` when service ``name`` is currently provided."""
        return name in self._services

    def _provide(self, name: str, service: object) -> Disposer:
        if name in self._services:
            raise HarnessError(f'service "{name}" is already provided', "DUPLICATE_SERVICE")
        self._services[name] = service

        def withdraw() -> None:
            if self._services.get(name) is service:
                del self._services[name]
                self._refresh()

        self._refresh()
        return withdraw

    # -- plugins ------------------------------------------------------------------------
    def plugin(self, plugin: Plugin, /, **config: Any) -> Scope:
        """Load ``plugin`` with ``config``; returns its disposable scope.

        The plugin is applied at once when its ``inject`` services exist, else when they
        appear. An exception from ``apply`` disposes the scope and propagates.
        """
        scope = Scope(self, plugin, config)
        self._scopes.append(scope)
        try:
            self._refresh()
        except BaseException:
            self._unload(scope)
            raise
        return scope

    def _unload(self, scope: Scope) -> None:
        if scope in self._scopes:
            self._scopes.remove(scope)
        was_active = scope.state is ScopeState.ACTIVE
        scope.state = ScopeState.DISPOSED
        if was_active:
            scope._deactivate()
        self._refresh()

    def _refresh(self) -> None:
        """Activate pending scopes whose services exist; deactivate those that lost one."""
        changed = True
        while changed:
            changed = False
            for scope in list(self._scopes):
                ready = all(name in self._services for name in scope.inject)
                if scope.state is ScopeState.ACTIVE and not ready:
                    scope.state = ScopeState.PENDING
                    scope._deactivate()
                    changed = True
                elif scope.state is ScopeState.PENDING and ready:
                    scope.state = ScopeState.ACTIVE
                    try:
                        scope.plugin.apply(scope, **scope.config)
                    except BaseException:
                        scope.state = ScopeState.DISPOSED
                        if scope in self._scopes:
                            self._scopes.remove(scope)
                        scope._deactivate()
                        raise
                    changed = True

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """The loaded plugin scopes, in load order."""
        return tuple(self._scopes)

    # -- lifecycle --------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Dispose every loaded plugin (newest first) and await their async disposers — a
        provider's ``aclose`` releases its HTTP client. Idempotent; afterwards only the kernel
        services remain and plugins may be loaded again. Runs to the end even when the caller
        is cancelled (shielded), so a client is never left half closed.

        :raises Exception: the first disposer failure, after running all of them
        """
        errors: list[BaseException] = []
        for scope in reversed(list(self._scopes)):
            try:
                scope.dispose()
            except Exception as exc:
                errors.append(exc)
        try:
            await self._release()
        except Exception as exc:
            errors.append(exc)
        if errors:
            raise errors[0]

    async def _release(self) -> None:
        """Await the pending async disposers, oldest first; report the first failure."""
        errors: list[BaseException] = []
        with anyio.CancelScope(shield=True):
            while self._pending:
                pending = self._pending.pop(0)
                try:
                    await (pending() if callable(pending) else pending)
                except Exception as exc:
                    errors.append(exc)
        if errors:
            raise errors[0]

    async def __aenter__(self) -> "Context":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- events ---------------------------------------------------------------------------
    def on(self, event: str, listener: Callable[..., Any], *, prepend: bool = False) -> Disposer:
        """Register ``listener`` for ``event`` (``prepend`` puts it first). Returns a disposer."""
        listeners = self._listeners.setdefault(event, [])
        if prepend:
            listeners.insert(0, listener)
        else:
            listeners.append(listener)

        def off() -> None:
            current = self._listeners.get(event)
            if current is not None and listener in current:
                current.remove(listener)
                if not current:
                    del self._listeners[event]

        return off

    def listeners(self, event: str) -> tuple[Callable[..., Any], ...]:
        """The listeners of ``event`` in dispatch order."""
        return tuple(self._listeners.get(event, ()))

    def emit(self, event: str, *args: Any) -> None:
        """Call every listener of ``event`` synchronously, in order (§1.4 ``emit``).

        Exceptions propagate to the caller; a returned awaitable is not awaited.
        """
        for listener in self.listeners(event):
            result = listener(*args)
            if inspect.iscoroutine(result):
                result.close()

    async def waterfall(self, event: str, *args: Any, default: Callable[[], Any]) -> Any:
        """Single-slot decision (§1.4 ``waterfall``): the first listener's return value wins.

        Each listener is called as ``listener(*args, next)`` where ``await next()`` runs the
        rest of the chain and finally ``default()``. Listeners may be sync or async;
        exceptions propagate.
        """
        chain = self.listeners(event)

        async def run(index: int) -> Any:
            if index >= len(chain):
                return await _maybe_await(default())

            async def next_() -> Any:
                return await run(index + 1)

            return await _maybe_await(chain[index](*args, next_))

        return await run(0)


async def _maybe_await(value: Any) -> Any:
    if isinstance(value, Awaitable):
        return await value
    return value


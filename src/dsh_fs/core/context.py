"""The kernel: plugin scopes, services and events (REFERENCE-SPEC §1.3, §1.4, §4.1).

A ``Context`` holds named services (``ctx.fs``, ``ctx.tools``, ``ctx.system_prompt``) and
event listeners. ``ctx.plugin(Plugin, **config)`` loads a plugin into its own ``Scope``;
everything the plugin registers through that scope (services, listeners, tools, prompt
sections) is removed again by ``scope.dispose()``. A plugin that declares ``inject`` stays
pending until those services exist, and goes back to pending when one is withdrawn.

Events come in two dispatch modes:

* ``emit`` — synchronous fan-out; listener exceptions propagate to the emitter.
* ``waterfall`` — single slot, first registered listener decides; each listener gets a
  ``next`` coroutine function that runs the rest of the chain, ending in the default.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .errors import HarnessError
from .profile import Profile
from .system_prompt import SystemPrompt
from .tools import ToolRegistry

__all__ = ("Context", "Plugin", "Scope", "ScopeState")

Disposer = Callable[[], None]


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

    def effect(self, disposer: Disposer) -> Disposer:
        """Run ``disposer`` when this scope is disposed or deactivated."""
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
        disposers, self._disposers = self._disposers, []
        errors: list[BaseException] = []
        for disposer in reversed(disposers):
            try:
                disposer()
            except Exception as exc:  # keep disposing; report the first failure
                errors.append(exc)
        if errors:
            raise errors[0]

    def dispose(self) -> None:
        """Remove every registration of this plugin (idempotent)."""
        if self.state is ScopeState.DISPOSED:
            return
        self.ctx._unload(self)

    def __enter__(self) -> "Scope":
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        return f"<Scope {self.name} {self.state.name.lower()}>"


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
        self._services["tools"] = ToolRegistry()
        self._services["system_prompt"] = SystemPrompt(persona=persona)

    # -- services ---------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._services[name]
        except KeyError:
            raise AttributeError(f'no service "{name}" is provided') from None

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


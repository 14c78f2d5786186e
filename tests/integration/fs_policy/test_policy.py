"""The observation policy plugin ``fs_policy`` driven through the ``fs/*`` events only.

Covers REFERENCE-SPEC §7.4 (``policy.spec.ts``: events only, no provider, every test named
in its docstring), §3.1–§3.3 (owner derivation, first-wins single slot, disposal drops
state, weakly held owners), and DEVIATIONS D8 at the event level (an absence observation in
the default profile; ignored in the reference profile) and D9's codes (remedy texts are
added by the tools, see test_tools.py).

Not covered here: the policy end to end with real tools and files (test_tools.py).
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from dsh_fs import Context, Session
from dsh_fs.core.context import ScopeState
from dsh_fs.core.session import ToolExecution
from dsh_fs.fs import FS_EDIT_INTENT, FS_OBSERVED, FS_WRITE_INTENT, FsError
from dsh_fs.fs.types import CreateIfAbsent, EditIntent, ReplaceIfVersion, Target, TargetKey, Version
from dsh_fs.fs_policy import FsPolicy
from dsh_fs.fs_policy.plugin import ABSENT, ObservationStore, owner_of

pytestmark = pytest.mark.anyio

A = Target(key=TargetKey("/w/a.txt"), display_path="/w/a.txt")
LINK = Target(key=TargetKey("/w/a.txt"), display_path="/w/link-to-a.txt")  # same key, other path
B = Target(key=TargetKey("/w/b.txt"), display_path="/w/b.txt")


def actor(session: Session | None) -> ToolExecution:
    return ToolExecution(session=session)


def unreachable() -> Any:
    raise AssertionError("the default of a decided slot was reached")


async def write_intent(ctx: Context, target: Target, who: Any) -> Any:
    return await ctx.waterfall(FS_WRITE_INTENT, target, who, default=lambda: None)


async def edit_intent(ctx: Context, target: Target, who: Any) -> Any:
    return await ctx.waterfall(FS_EDIT_INTENT, target, who, default=lambda: None)


def observe(ctx: Context, target: Target, version: str | None, who: Any) -> None:
    ctx.emit(FS_OBSERVED, target, None if version is None else Version(version), who)


async def refused(ctx: Context, target: Target, who: Any) -> FsError:
    with pytest.raises(FsError) as caught:
        await edit_intent(ctx, target, who)
    return caught.value


@pytest.fixture
def ctx() -> Context:
    context = Context(profile="reference")
    context.plugin(FsPolicy)
    return context


# ------------------------------------------------------------------------------------------
# registration / disposal
# ------------------------------------------------------------------------------------------

def test_registers_no_service_surface() -> None:
    """registration / disposal: registers no service surface (it is a plugin, not ctx.fsPolicy)"""
    ctx = Context()
    before = set(ctx._services)
    ctx.plugin(FsPolicy)
    assert set(ctx._services) == before
    assert not any(ctx.has(name) for name in ("fsPolicy", "fs_policy", "fs-policy", "policy"))


async def test_mounts_with_no_inject() -> None:
    """registration / disposal: mounts with no inject (reads no services)"""
    ctx = Context()
    scope = ctx.plugin(FsPolicy)
    assert not getattr(FsPolicy, "inject", ())
    assert scope.state is ScopeState.ACTIVE and not ctx.has("fs")
    assert await write_intent(ctx, A, actor(Session())) == CreateIfAbsent()


# ------------------------------------------------------------------------------------------
# write-intent decision
# ------------------------------------------------------------------------------------------

async def test_an_unobserved_target_decides_create_if_absent(ctx: Context) -> None:
    """write-intent decision: an unobserved target decides createIfAbsent"""
    assert await write_intent(ctx, A, actor(Session())) == CreateIfAbsent()


@pytest.mark.parametrize("who", [None, {}, object(), {"session": Session()}], ids=["none", "dict", "object", "dict-session"])
async def test_a_no_owner_actor_decides_create_if_absent(ctx: Context, who: Any) -> None:
    """write-intent decision: a no-owner actor decides createIfAbsent"""
    observe(ctx, A, "v1", who)
    assert owner_of(who) is None
    assert await write_intent(ctx, A, who) == CreateIfAbsent()


async def test_an_actor_with_an_agent_but_no_session_has_no_owner(ctx: Context) -> None:
    """write-intent decision: an actor with an agent but no session has no owner (createIfAbsent)"""
    who = actor(None)
    observe(ctx, A, "v1", who)
    assert await write_intent(ctx, A, who) == CreateIfAbsent()


async def test_an_observed_target_decides_replace_if_version_at_the_observed_version(ctx: Context) -> None:
    """write-intent decision: an observed target decides replaceIfVersion at the observed version"""
    who = actor(Session())
    observe(ctx, A, "v7", who)
    assert await write_intent(ctx, A, who) == ReplaceIfVersion(Version("v7"))
    assert await write_intent(ctx, LINK, who) == ReplaceIfVersion(Version("v7"))  # keyed by target key
    assert await write_intent(ctx, B, who) == CreateIfAbsent()


# ------------------------------------------------------------------------------------------
# edit-intent decision
# ------------------------------------------------------------------------------------------

async def test_rejects_an_unread_edit_with_fs_not_observed(ctx: Context) -> None:
    """edit-intent decision: rejects an unread edit with FS_NOT_OBSERVED"""
    err = await refused(ctx, A, actor(Session()))
    assert (err.code, str(err)) == ("FS_NOT_OBSERVED", 'edit requires reading "/w/a.txt" first')
    err = await refused(ctx, LINK, actor(Session()))
    assert str(err) == 'edit requires reading "/w/link-to-a.txt" first'  # the display path, not the key


@pytest.mark.parametrize("who", [None, {}, object()], ids=["none", "dict", "object"])
async def test_rejects_an_edit_with_no_owner(ctx: Context, who: Any) -> None:
    """edit-intent decision: rejects an edit with no owner (cannot prove prior observation)"""
    observe(ctx, A, "v1", who)
    assert (await refused(ctx, A, who)).code == "FS_NOT_OBSERVED"


async def test_rejects_an_edit_whose_actor_has_an_agent_but_no_session(ctx: Context) -> None:
    """edit-intent decision: rejects an edit whose actor has an agent but no session (no owner)"""
    who = actor(None)
    observe(ctx, A, "v1", who)
    assert (await refused(ctx, A, who)).code == "FS_NOT_OBSERVED"


async def test_returns_the_observed_version_as_the_cas_basis(ctx: Context) -> None:
    """edit-intent decision: returns the observed version as the CAS basis after an observation"""
    who = actor(Session())
    observe(ctx, A, "v3", who)
    assert await edit_intent(ctx, A, who) == EditIntent(Version("v3"))


# ------------------------------------------------------------------------------------------
# observed-state is the prior-observation record
# ------------------------------------------------------------------------------------------

async def test_a_read_observation_authorizes_an_in_place_write_at_that_version(ctx: Context) -> None:
    """observed-state: a read observation authorizes an in-place write at that version"""
    who = actor(Session())
    observe(ctx, A, "v1", who)
    assert await write_intent(ctx, A, who) == ReplaceIfVersion(Version("v1"))


async def test_a_write_or_edit_observation_refreshes_the_basis(ctx: Context) -> None:
    """observed-state: a write/edit observation refreshes the basis, so the next edit needs no re-read"""
    session = Session()
    observe(ctx, A, "v1", actor(session))
    assert await edit_intent(ctx, A, actor(session)) == EditIntent(Version("v1"))
    observe(ctx, A, "v2", actor(session))  # a new execution of the same session: same owner
    assert await edit_intent(ctx, A, actor(session)) == EditIntent(Version("v2"))
    assert await write_intent(ctx, A, actor(session)) == ReplaceIfVersion(Version("v2"))


async def test_a_no_owner_observation_records_nothing(ctx: Context) -> None:
    """observed-state: a no-owner observation records nothing"""
    session = Session()
    observe(ctx, A, "v1", None)
    observe(ctx, A, "v1", actor(None))
    assert (await refused(ctx, A, actor(session))).code == "FS_NOT_OBSERVED"


# ------------------------------------------------------------------------------------------
# multi-owner isolation
# ------------------------------------------------------------------------------------------

async def test_owner_a_observing_does_not_grant_owner_b_edit_authority(ctx: Context) -> None:
    """multi-owner isolation: owner A observing does not grant owner B edit authority"""
    a, b = Session("/w", id="same"), Session("/w", id="same")  # equal fields, different objects
    observe(ctx, A, "v1", actor(a))
    assert (await refused(ctx, A, actor(b))).code == "FS_NOT_OBSERVED"


async def test_each_owner_records_its_own_observed_version_independently(ctx: Context) -> None:
    """multi-owner isolation: each owner records its own observed version independently"""
    a, b = Session(), Session()
    observe(ctx, A, "v1", actor(a))
    observe(ctx, B, "v5", actor(b))
    assert await write_intent(ctx, A, actor(b)) == CreateIfAbsent()
    assert await write_intent(ctx, A, actor(a)) == ReplaceIfVersion(Version("v1"))
    observe(ctx, A, "v2", actor(b))
    assert await edit_intent(ctx, A, actor(a)) == EditIntent(Version("v1"))
    assert await edit_intent(ctx, A, actor(b)) == EditIntent(Version("v2"))


# ------------------------------------------------------------------------------------------
# single-slot, first-wins
# ------------------------------------------------------------------------------------------

async def test_fully_decides_the_slot_without_calling_next(ctx: Context) -> None:
    """single-slot, first-wins: fully decides the slot without calling next() (the bare default is unreached)"""
    who = actor(Session())
    assert await ctx.waterfall(FS_WRITE_INTENT, A, who, default=unreachable) == CreateIfAbsent()
    with pytest.raises(FsError):
        await ctx.waterfall(FS_EDIT_INTENT, A, who, default=unreachable)
    observe(ctx, A, "v1", who)
    assert await ctx.waterfall(FS_EDIT_INTENT, A, who, default=unreachable) == EditIntent(Version("v1"))


async def test_a_second_edit_decider_registered_after_fs_policy_is_not_reached(ctx: Context) -> None:
    """single-slot, first-wins: a SECOND decider registered AFTER fs-policy is not reached (first-wins short-circuit)"""
    reached: list[Any] = []
    ctx.on(FS_EDIT_INTENT, lambda target, who, nxt: reached.append(target) or EditIntent(Version("other")))
    who = actor(Session())
    assert (await refused(ctx, A, who)).code == "FS_NOT_OBSERVED"
    observe(ctx, A, "v1", who)
    assert await edit_intent(ctx, A, who) == EditIntent(Version("v1"))
    assert reached == []


async def test_a_second_write_intent_decider_registered_after_fs_policy_is_not_reached(ctx: Context) -> None:
    """single-slot, first-wins: a SECOND write-intent decider registered AFTER fs-policy is not reached"""
    reached: list[Any] = []
    ctx.on(FS_WRITE_INTENT, lambda target, who, nxt: reached.append(target))
    assert await write_intent(ctx, A, actor(Session())) == CreateIfAbsent()
    assert reached == []


async def test_a_decider_registered_before_fs_policy_wins_instead() -> None:
    """§3.3: first-wins is registration order — an earlier (or prepended) decider owns the slot"""
    ctx = Context()
    ctx.on(FS_WRITE_INTENT, lambda target, who, nxt: "earlier")
    ctx.plugin(FsPolicy)
    assert await write_intent(ctx, A, actor(Session())) == "earlier"
    ctx.on(FS_EDIT_INTENT, lambda target, who, nxt: "prepended", prepend=True)
    assert await edit_intent(ctx, A, actor(Session())) == "prepended"


# ------------------------------------------------------------------------------------------
# disposal releases recorded state (HMR safety)
# ------------------------------------------------------------------------------------------

async def test_a_fresh_plugin_after_disposal_starts_with_no_inherited_state() -> None:
    """disposal releases recorded state: a fresh plugin after disposal starts with no inherited state"""
    ctx = Context()
    scope = ctx.plugin(FsPolicy)
    who = actor(Session())
    observe(ctx, A, "v1", who)
    assert await edit_intent(ctx, A, who) == EditIntent(Version("v1"))
    scope.dispose()
    ctx.plugin(FsPolicy)
    assert (await refused(ctx, A, who)).code == "FS_NOT_OBSERVED"


async def test_no_listeners_remain_after_disposal() -> None:
    """disposal releases recorded state: no listeners remain after disposal (the gate no longer decides)"""
    ctx = Context()
    scope = ctx.plugin(FsPolicy)
    scope.dispose()
    for event in (FS_WRITE_INTENT, FS_EDIT_INTENT, FS_OBSERVED):
        assert ctx.listeners(event) == ()
    who = actor(Session())
    assert await write_intent(ctx, A, who) is None
    assert await edit_intent(ctx, A, who) is None


# ------------------------------------------------------------------------------------------
# owners are held weakly; a shared store; D8 absence observations
# ------------------------------------------------------------------------------------------

async def test_observations_do_not_keep_a_session_alive() -> None:
    """§3.1: ``WeakKeyDictionary`` keyed by the session object"""
    store = ObservationStore()
    ctx = Context()
    ctx.plugin(FsPolicy, store=store)
    session = Session()
    observe(ctx, A, "v1", actor(session))
    assert store.snapshot(session) == {"/w/a.txt": "v1"}
    ref = weakref.ref(session)
    del session
    gc.collect()
    assert ref() is None


async def test_a_bounded_store_forgets_the_least_recently_recorded_file_and_fails_safe() -> None:
    """issue 12.2: ``max_per_owner`` bounds one owner's observations; a forgotten file must be
    read again (``FS_NOT_OBSERVED``), never overwritten blind; other owners are unaffected"""
    store = ObservationStore(max_per_owner=2)
    ctx = Context()
    ctx.plugin(FsPolicy, store=store)
    C = Target(key=TargetKey("/w/c.txt"), display_path="/w/c.txt")
    session, other = Session(), Session()
    observe(ctx, A, "a1", actor(session))
    observe(ctx, B, "b1", actor(session))
    observe(ctx, A, "a2", actor(session))  # re-recorded: A is now the most recent
    observe(ctx, C, "c1", actor(other))
    observe(ctx, C, "c1", actor(session))  # past the bound: B goes
    assert store.snapshot(session) == {"/w/a.txt": "a2", "/w/c.txt": "c1"}
    assert store.snapshot(other) == {"/w/c.txt": "c1"}
    assert (await refused(ctx, B, actor(session))).code == "FS_NOT_OBSERVED"
    assert await write_intent(ctx, B, actor(session)) == CreateIfAbsent()
    assert await edit_intent(ctx, A, actor(session)) == EditIntent(Version("a2"))
    with pytest.raises(ValueError):
        ObservationStore(max_per_owner=0)


async def test_a_shared_store_survives_a_reload() -> None:
    store = ObservationStore()
    ctx = Context()
    scope = ctx.plugin(FsPolicy, store=store)
    session = Session()
    observe(ctx, A, "v1", actor(session))
    scope.dispose()
    ctx.plugin(FsPolicy, store=store)
    assert await edit_intent(ctx, A, actor(session)) == EditIntent(Version("v1"))


async def test_D8_a_missing_file_read_records_absence_in_the_default_profile() -> None:
    """D8: absence is recorded (default): write → createIfAbsent, edit → FS_NOT_FOUND ``cannot edit "<p>": not found``"""
    ctx = Context(profile="default")
    ctx.plugin(FsPolicy)
    session = Session()
    observe(ctx, A, "v1", actor(session))
    observe(ctx, A, None, actor(session))  # a later read found no file
    assert await write_intent(ctx, A, actor(session)) == CreateIfAbsent()
    err = await refused(ctx, A, actor(session))
    assert (err.code, str(err)) == ("FS_NOT_FOUND", 'cannot edit "/w/a.txt": not found')
    observe(ctx, A, "v2", actor(session))  # the session then created or read it
    assert await edit_intent(ctx, A, actor(session)) == EditIntent(Version("v2"))


async def test_D8_reference_profile_ignores_absence(ctx: Context) -> None:
    """D8 (reference): a versionless observation changes nothing — the old version stays the basis"""
    session = Session()
    observe(ctx, A, None, actor(session))
    assert (await refused(ctx, A, actor(session))).code == "FS_NOT_OBSERVED"
    observe(ctx, A, "v1", actor(session))
    observe(ctx, A, None, actor(session))
    assert await write_intent(ctx, A, actor(session)) == ReplaceIfVersion(Version("v1"))


def test_the_absence_marker_is_distinct_from_every_version() -> None:
    store = ObservationStore()
    session = Session()
    store.record(session, "/w/a.txt", ABSENT)
    store.record(None, "/w/b.txt", Version("v1"))  # no owner: nothing
    assert store.get(session, "/w/a.txt") is ABSENT and store.get(session, "/w/b.txt") is None
    assert store.get(None, "/w/a.txt") is None and repr(ABSENT) == "ABSENT"

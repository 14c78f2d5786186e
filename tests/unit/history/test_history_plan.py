"""The rewind planner and the history model, pure (no provider): what a rewind restores, removes,
moves back or refuses, for every kind of change and current state."""

from __future__ import annotations

import hashlib

import pytest

from dsh_fs.history.model import Before, Checkpoint, FileChange, History, Step, digest_of
from dsh_fs.history.plan import Current, Expected, Plan, Refusal, decide, spans
from dsh_fs.history.rewind import RewindError, point_of

D1, D2 = digest_of(b"one"), digest_of(b"two")


def ch(id: int, op: str, key: str, before: Before, after: str | None = "v", dest: str | None = None) -> FileChange:
    return FileChange(id=id, op=op, key=key, path="/" + key, before=before, before_version="b",  # type: ignore[arg-type]
                      after_version=after, dest_key=dest, dest_path=None if dest is None else "/" + dest)


def test_digest_is_sha256_hex() -> None:
    assert digest_of(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert len(digest_of(b"")) == 64


def test_before_constructors() -> None:
    assert Before.blob(D1, 3, 0o644) == Before(kind="blob", digest=D1, size=3, mode=0o644)
    assert Before.absent() == Before(kind="absent")
    assert Before.unrestorable("why") == Before(kind="unrestorable", reason="why")
    assert Before.replacement("a", "b") == Before(kind="replacement", old="a", new="b")


def test_step_paths_and_pending() -> None:
    step = Step(number=1, time=0.0, tool="apply_patch", owner="o", changes=(
        ch(1, "write", "a", Before.absent()), ch(2, "rename", "b", Before.blob(D1, 3), dest="c"),
        ch(3, "edit", "a", Before.blob(D2, 3), after=None)))
    assert step.paths == ("/a", "/b", "/c")
    assert step.pending
    assert not Step(number=1, time=0.0, tool="w", owner="o", changes=step.changes[:2]).pending
    assert ch(1, "write", "a", Before.absent(), after=None).pending
    assert not ch(1, "write", "a", Before.absent()).pending


def test_history_last() -> None:
    assert History().last == 0
    assert History(dropped=4).last == 4
    assert History(steps=(Step(number=7, time=0, tool="w", owner="o"),), dropped=4).last == 7


def test_spans_target_is_first_before_expected_is_last_after() -> None:
    got = spans([ch(1, "write", "a", Before.blob(D1, 3), after="v1"), ch(2, "edit", "a", Before.blob(D2, 3), after="v2")])
    assert list(got) == ["a"]
    assert got["a"].target == Before.blob(D1, 3)
    assert got["a"].expected == Expected(kind="present", version="v2")
    assert [c.id for c, _ in got["a"].effects] == [1, 2]


def test_spans_of_delete_and_move() -> None:
    got = spans([ch(1, "delete", "a", Before.blob(D1, 3)), ch(2, "rename", "b", Before.blob(D2, 3), after="v9", dest="c")])
    assert got["a"].expected == Expected(kind="absent")
    assert got["b"].expected == Expected(kind="absent") and got["b"].target == Before.blob(D2, 3)
    assert got["c"].expected == Expected(kind="present", version="v9") and got["c"].target == Before.absent()
    assert got["c"].path == "/c" and got["c"].effects[0][1] == "dest"


def test_spans_of_pending_changes() -> None:
    got = spans([ch(1, "write", "a", Before.blob(D1, 3), after=None), ch(2, "delete", "b", Before.blob(D2, 3), after=None),
                 ch(3, "rename", "c", Before.blob(D1, 3), after=None, dest="d")])
    assert got["a"].expected == Expected(kind="either", before=Before.blob(D1, 3), after_absent=False)
    assert got["b"].expected == Expected(kind="either", before=Before.blob(D2, 3), after_absent=True)
    assert got["c"].expected == Expected(kind="either", before=Before.blob(D1, 3), after_absent=True)
    assert got["d"].expected == Expected(kind="either", before=Before.absent(), after_absent=False)


def plan_of(changes: list[FileChange], currents: dict[str, Current], **kw: object) -> Plan:
    return decide(spans(changes), currents, **kw)  # type: ignore[arg-type]


def test_restore_a_changed_file_guarded_by_its_version() -> None:
    plan = plan_of([ch(1, "edit", "a", Before.blob(D1, 3, 0o640))],
                   {"a": Current(exists=True, version="cur", at_expected=True, digest=D2)})
    assert not plan.refused and plan.unchanged == ()
    (action,) = plan.actions
    assert (action.kind, action.key, action.path, action.guard, action.digest, action.mode, action.forced) == (
        "restore", "a", "/a", "cur", D1, 0o640, False)


def test_remove_a_created_file() -> None:
    plan = plan_of([ch(1, "write", "a", Before.absent())], {"a": Current(exists=True, version="cur", at_expected=True)})
    (action,) = plan.actions
    assert (action.kind, action.guard) == ("remove", "cur")


def test_bring_back_a_deleted_file_created_if_absent() -> None:
    plan = plan_of([ch(1, "delete", "a", Before.blob(D1, 3))], {"a": Current(exists=False)})
    (action,) = plan.actions
    assert (action.kind, action.guard, action.digest) == ("restore", None, D1)


def test_move_back() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after="v9", dest="b")]
    plan = plan_of(changes, {"a": Current(exists=False), "b": Current(exists=True, version="v9b", at_expected=True)})
    (action,) = plan.actions
    assert (action.kind, action.key, action.from_key, action.from_path, action.guard) == ("move", "a", "b", "/b", "v9b")
    assert plan.unchanged == ()


def test_no_move_back_when_the_destination_changed_again() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after="v9", dest="b"), ch(2, "edit", "b", Before.blob(D1, 3), after="v10")]
    plan = plan_of(changes, {"a": Current(exists=False), "b": Current(exists=True, version="x", at_expected=True, digest=D2)})
    assert sorted((a.kind, a.key) for a in plan.actions) == [("remove", "b"), ("restore", "a")]
    assert [a.kind for a in plan.actions] == ["remove", "restore"]


def test_no_move_back_when_the_source_was_made_again() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after="v9", dest="b"), ch(2, "write", "a", Before.absent(), after="v3")]
    plan = plan_of(changes, {"a": Current(exists=True, version="v3", at_expected=True, digest=D2),
                             "b": Current(exists=True, version="v9", at_expected=True)})
    assert sorted((a.kind, a.key, a.guard) for a in plan.actions) == [("remove", "b", "v9"), ("restore", "a", "v3")]


def test_no_move_back_of_a_pending_move() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after=None, dest="b")]
    plan = plan_of(changes, {"a": Current(exists=False), "b": Current(exists=True, version="v", digest=D1)})
    assert sorted((a.kind, a.key) for a in plan.actions) == [("remove", "b"), ("restore", "a")]


def test_unchanged_when_already_there() -> None:
    plan = plan_of([ch(1, "write", "a", Before.absent()), ch(2, "edit", "b", Before.blob(D1, 3))],
                   {"a": Current(exists=False), "b": Current(exists=True, version="v", at_expected=True, digest=D1)})
    assert plan.actions == () and plan.unchanged == ("/a", "/b") and not plan.refused


@pytest.mark.parametrize(("changes", "current", "why"), [
    ([ch(1, "edit", "a", Before.blob(D1, 3))], Current(exists=True, version="x", at_expected=False, digest=D2), "changed"),
    ([ch(1, "edit", "a", Before.blob(D1, 3))], Current(exists=False), "deleted"),
    ([ch(1, "delete", "a", Before.blob(D1, 3))], Current(exists=True, version="x", digest=D2), "created"),
    ([ch(1, "write", "a", Before.absent())], Current(exists=True, version="x", at_expected=False, digest=D2), "changed"),
    ([ch(1, "delete", "a", Before.blob(D1, 3), after=None)], Current(exists=True, version="x", digest=D2), "created"),
    ([ch(1, "write", "a", Before.blob(D1, 3), after=None)], Current(exists=False), "deleted"),
])
def test_refused_when_someone_else_changed_it(changes: list[FileChange], current: Current, why: str) -> None:
    plan = plan_of(changes, {"a": current})
    assert plan.refused and plan.actions == ()
    (refusal,) = plan.refusals
    assert (refusal.key, refusal.path, refusal.why, refusal.skipped) == ("a", "/a", why, False)
    assert refusal.reason == f"{why} since this owner's last change"
    skipped = plan_of(changes, {"a": current}, skip_changed=True)
    assert not skipped.refused and skipped.refusals[0].skipped and skipped.actions == ()
    for name in ("a", "/a"):
        assert not plan_of(changes, {"a": current}, skip={name}).refused
        forced = plan_of(changes, {"a": current}, force={name})
        assert not forced.refused and forced.refusals == ()
        assert all(a.forced for a in forced.actions)


def test_forced_restore_is_guarded_by_what_is_there_now() -> None:
    forced = plan_of([ch(1, "edit", "a", Before.blob(D1, 3))],
                     {"a": Current(exists=True, version="other", at_expected=False, digest=D2)}, force=["/a"])
    (action,) = forced.actions
    assert (action.kind, action.guard, action.forced) == ("restore", "other", True)
    recreate = plan_of([ch(1, "edit", "a", Before.blob(D1, 3))], {"a": Current(exists=False)}, force=["a"])
    assert [(a.kind, a.guard) for a in recreate.actions] == [("restore", None)]


def test_a_forced_file_is_never_moved_back() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after="v9", dest="b")]
    plan = plan_of(changes, {"a": Current(exists=True, version="n", digest=D2),
                             "b": Current(exists=True, version="v9", at_expected=True)}, force=["/a"])
    assert sorted((a.kind, a.key) for a in plan.actions) == [("remove", "b"), ("restore", "a")]


@pytest.mark.parametrize(("before", "current", "ok"), [
    (Before.blob(D1, 3), Current(exists=True, version="x", digest=D1), True),   # never happened
    (Before.blob(D1, 3), Current(exists=True, version="x", digest=D2), True),   # happened (a write: any file)
    (Before.absent(), Current(exists=False), True),
    (Before.blob(D1, 3), Current(exists=False), False),
])
def test_a_pending_write_accepts_either_state(before: Before, current: Current, ok: bool) -> None:
    plan = plan_of([ch(1, "write", "a", before, after=None)], {"a": current})
    assert plan.refused is not ok


@pytest.mark.parametrize(("current", "ok"), [
    (Current(exists=False), True),                               # the delete happened
    (Current(exists=True, version="x", digest=D1), True),        # it did not
    (Current(exists=True, version="x", digest=D2), False),       # someone wrote another file there
    (Current(exists=True, version="x"), False),                  # unknown bytes: not shown to be ours
])
def test_a_pending_delete_accepts_either_state(current: Current, ok: bool) -> None:
    plan = plan_of([ch(1, "delete", "a", Before.blob(D1, 3), after=None)], {"a": current})
    assert plan.refused is not ok
    if ok:
        assert plan.unchanged == ("/a",) if current.exists else [a.kind for a in plan.actions] == ["restore"]


def test_pending_delete_of_a_file_created_there() -> None:
    plan = plan_of([ch(1, "delete", "a", Before.absent(), after=None)], {"a": Current(exists=True, version="x", digest=D1)})
    assert plan.refused and plan.refusals[0].why == "created"


def test_reverse_edits_for_replacements_in_reverse_order() -> None:
    changes = [ch(1, "edit", "a", Before.replacement("x", "y"), after="v1"), ch(2, "edit", "a", Before.replacement("y", "z"), after="v2")]
    plan = plan_of(changes, {"a": Current(exists=True, version="v2", at_expected=True)})
    (action,) = plan.actions
    assert (action.kind, action.guard, action.edits) == ("reverse_edit", "v2", (("z", "y"), ("y", "x")))


@pytest.mark.parametrize("changes", [
    [ch(1, "edit", "a", Before.replacement("x", "y")), ch(2, "write", "a", Before.unrestorable("big"))],
    [ch(1, "edit", "a", Before.replacement("x", "y")), ch(2, "edit", "a", Before.blob(D1, 3))],
    [ch(1, "write", "a", Before.replacement("x", "y"))],
    [ch(1, "edit", "a", Before(kind="replacement", old=None, new="y"))],
])
def test_replacements_mixed_with_other_changes_are_not_restorable(changes: list[FileChange]) -> None:
    plan = plan_of(changes, {"a": Current(exists=True, version="v", at_expected=True)})
    assert plan.refused
    assert plan.refusals[0].why == "unrestorable"
    assert plan.refusals[0].reason == "not restorable: its content before the change was not kept"


def test_unrestorable_says_why_and_cannot_be_forced() -> None:
    changes = [ch(1, "write", "a", Before.unrestorable("20 bytes, over the 10-byte cap"))]
    current = {"a": Current(exists=True, version="v", at_expected=True)}
    plan = plan_of(changes, current)
    assert plan.refusals == (Refusal(key="a", path="/a", why="unrestorable",
                                     reason="not restorable: 20 bytes, over the 10-byte cap"),)
    assert plan_of(changes, current, force=["/a"]).refused
    assert not plan_of(changes, current, skip_changed=True).refused
    assert not plan_of(changes, current, skip=["a"]).refused


def test_refused_is_true_only_for_an_unskipped_refusal() -> None:
    assert not Plan().refused
    assert Plan(refusals=(Refusal(key="a", path="/a", why="changed", reason="r", skipped=True),)).refused is False
    assert Plan(refusals=(Refusal(key="a", path="/a", why="changed", reason="r"),)).refused is True


def steps(n: int, *, dropped: int = 0, checkpoints: tuple[Checkpoint, ...] = ()) -> History:
    return History(steps=tuple(Step(number=i, time=0, tool="w", owner="o") for i in range(dropped + 1, n + 1)),
                   dropped=dropped, checkpoints=checkpoints)


def test_point_of() -> None:
    h = steps(5, checkpoints=(Checkpoint(id="c1", name="x", step=2, time=0), Checkpoint(id="c2", name="x", step=3, time=1)))
    assert point_of(h, to=4, last=None) == 4
    assert point_of(h, to=0, last=None) == 0
    assert point_of(h, to=5, last=None) == 5
    assert point_of(h, to=None, last=2) == 3
    assert point_of(h, to=None, last=0) == 5
    assert point_of(h, to=None, last=9) == 0
    assert point_of(h, to="x", last=None) == 3
    assert point_of(h, to="c1", last=None) == 2


@pytest.mark.parametrize(("to", "last", "message"), [
    (None, None, "give either to="), (1, 1, "give either to="), ("nope", None, "no checkpoint named 'nope'"),
    (6, None, "no step 6 (the history has steps up to 5)"), (-1, None, "no step -1"),
    (True, None, "to= must be a step number"), (1.5, None, "to= must be a step number"),
    (None, -1, "last= must be a number of steps"), (None, True, "last= must be a number of steps"),
])
def test_point_of_refuses(to: object, last: object, message: str) -> None:
    with pytest.raises(RewindError, match="^" + __import__("re").escape(message)):
        point_of(steps(5), to=to, last=last)  # type: ignore[arg-type]


def test_point_of_before_dropped_steps() -> None:
    h = steps(5, dropped=2)
    assert point_of(h, to=2, last=None) == 2
    assert point_of(h, to=None, last=10) == 2
    with pytest.raises(RewindError, match="the steps up to 2 were dropped from the history"):
        point_of(h, to=1, last=None)


@pytest.mark.parametrize("value", [
    Before.absent(), ch(1, "write", "a", Before.absent()), Step(number=1, time=0, tool="w", owner="o"),
    Checkpoint(id="i", name="n", step=0, time=0), History(),
    Expected(kind="absent"), Current(exists=False), Refusal(key="a", path="/a", why="changed", reason="r"), Plan(),
])
def test_values_are_frozen_slotted_and_keyword_only(value: object) -> None:
    import dataclasses

    assert not hasattr(value, "__dict__")
    field = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)
    with pytest.raises(TypeError):
        type(value)(*[getattr(value, f.name) for f in dataclasses.fields(value)])  # type: ignore[arg-type]


def test_actions_and_spans_are_keyword_only() -> None:
    import dataclasses

    from dsh_fs.history.plan import Action, Span

    action = Action(kind="remove", key="a", path="/a")
    assert not hasattr(action, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.key = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Action("remove", "a", "/a")  # type: ignore[misc]
    span = Span(key="a", path="/a", target=Before.absent())
    assert not hasattr(span, "__dict__") and span.effects == [] and span.expected == Expected(kind="absent")
    with pytest.raises(TypeError):
        Span("a", "/a", Before.absent())  # type: ignore[misc]


def test_defaults_of_the_values() -> None:
    from dsh_fs.history.plan import Action

    assert History().bytes == 0 and History().dropped == 0
    assert Expected(kind="present").after_absent is False
    assert Action(kind="remove", key="a", path="/a").forced is False
    assert Current(exists=True).at_expected is False


def test_a_rename_without_a_destination_key_is_one_span() -> None:
    got = spans([ch(1, "rename", "a", Before.blob(D1, 3))])
    assert list(got) == ["a"]


def test_a_missing_current_is_absent() -> None:
    plan = decide(spans([ch(1, "delete", "a", Before.blob(D1, 3))]), {})
    assert [(a.kind, a.guard) for a in plan.actions] == [("restore", None)]


def test_a_pending_write_after_a_delete_that_never_happened() -> None:
    changes = [ch(1, "delete", "a", Before.blob(D1, 3)), ch(2, "write", "a", Before.absent(), after=None)]
    plan = plan_of(changes, {"a": Current(exists=False)})
    assert [(a.kind, a.digest) for a in plan.actions] == [("restore", D1)]


@pytest.mark.parametrize(("digest", "ok"), [(D2, True), (D1, False), (None, False)])
def test_a_pending_delete_after_an_edit(digest: str | None, ok: bool) -> None:
    changes = [ch(1, "edit", "a", Before.blob(D1, 3)), ch(2, "delete", "a", Before.blob(D2, 3), after=None)]
    plan = plan_of(changes, {"a": Current(exists=True, version="x", digest=digest)})
    if ok:  # the delete never happened: the file is the edit's result, taken back
        assert [(a.kind, a.digest, a.guard) for a in plan.actions] == [("restore", D1, "x")]
    elif digest == D1:  # already as at the point
        assert plan.actions == () and plan.unchanged == ("/a",)
    else:
        assert plan.refused and plan.refusals[0].why == "created"


def test_no_move_back_of_a_pending_move_even_at_its_version() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after=None, dest="b")]
    plan = plan_of(changes, {"a": Current(exists=False), "b": Current(exists=True, version="v", at_expected=True, digest=D1)})
    assert sorted(a.kind for a in plan.actions) == ["remove", "restore"]


def test_no_move_back_when_the_destination_is_not_at_its_version() -> None:
    changes = [ch(1, "rename", "a", Before.blob(D1, 3), after="v9", dest="b")]
    plan = plan_of(changes, {"a": Current(exists=False), "b": Current(exists=True, version="w", at_expected=False, digest=D2)})
    assert plan.refused and [r.key for r in plan.refusals] == ["b"]
    forced = plan_of(changes, {"a": Current(exists=False), "b": Current(exists=True, version="w", digest=D2)}, force=["b"])
    assert sorted(a.kind for a in forced.actions) == ["remove", "restore"]


def test_a_forced_replacement_of_a_deleted_file_is_not_restorable() -> None:
    changes = [ch(1, "edit", "a", Before.replacement("x", "y"))]
    plan = plan_of(changes, {"a": Current(exists=False)}, force=["/a"])
    assert plan.actions == () and plan.refused and plan.refusals[0].why == "unrestorable"


def test_actions_in_order_remove_move_restore_reverse_edit() -> None:
    changes = [ch(1, "edit", "r", Before.replacement("p", "q"), after="vr"), ch(2, "edit", "w", Before.blob(D1, 3), after="vw"),
               ch(3, "rename", "m", Before.blob(D2, 3), after="vn", dest="n"), ch(4, "write", "x", Before.absent(), after="vx")]
    currents = {"r": Current(exists=True, version="vr", at_expected=True), "w": Current(exists=True, version="vw", at_expected=True),
                "m": Current(exists=False), "n": Current(exists=True, version="vn", at_expected=True),
                "x": Current(exists=True, version="vx", at_expected=True)}
    plan = plan_of(changes, currents)
    assert [(a.kind, a.key) for a in plan.actions] == [("remove", "x"), ("move", "m"), ("restore", "w"),
                                                       ("reverse_edit", "r")]
    assert plan.refusals == () and plan.unchanged == ()


def test_point_of_a_step_the_history_does_not_list() -> None:
    """A step number between listed steps (a concurrent call took the next number while the call
    before it was abandoned) is refused as a number; a checkpoint there and ``last`` still work."""
    h = History(steps=tuple(Step(number=i, time=0, tool="w", owner="o") for i in (1, 3, 4)),
                checkpoints=(Checkpoint(id="c1", name="x", step=2, time=0),))
    with pytest.raises(RewindError, match=r"^no step 2 in the history \(its call changed nothing: give a step the"
                                          r" history lists\)$"):
        point_of(h, to=2, last=None)
    assert [point_of(h, to=n, last=None) for n in (0, 1, 3, 4)] == [0, 1, 3, 4]
    assert point_of(h, to="x", last=None) == 2 and point_of(h, to=None, last=2) == 2
    assert point_of(History(steps=h.steps[1:], dropped=2), to=2, last=None) == 2  # the oldest point held


D3 = digest_of(b"three")


def witnessed(id: int, key: str, before: Before, *, after: str | None, digest: str) -> FileChange:
    return FileChange(id=id, op="edit", key=key, path="/" + key, before=before, before_version="b",
                      after_version=after, after_digest=digest)


@pytest.mark.parametrize(("before", "current", "ok"), [
    (Before.blob(D1, 3), Current(exists=True, version="x", digest=D2), True),   # happened: the bytes it put
    (Before.blob(D1, 3), Current(exists=True, version="x", digest=D1), True),   # never happened (unchanged)
    (Before.blob(D1, 3), Current(exists=True, version="x", digest=D3), False),  # someone else's bytes
    (Before.blob(D1, 3), Current(exists=True, version="x"), True),              # bytes not read (too big): either
    (Before.absent(), Current(exists=True, version="x", digest=D3), False),     # a create, then others' bytes
    (Before.replacement("a", "b"), Current(exists=True, version="x", digest=D3), False),
    (Before.replacement("a", "b"), Current(exists=True, version="x", digest=D2), True),
])
def test_a_pending_change_whose_bytes_were_witnessed_accepts_only_its_two_states(
        before: Before, current: Current, ok: bool) -> None:
    plan = plan_of([witnessed(1, "a", before, after=None, digest=D2)], {"a": current})
    assert plan.refused is not ok
    if not ok:
        assert plan.refusals[0].why == "changed"


@pytest.mark.parametrize(("current", "ok"), [
    (Current(exists=True, version="v"), True),                       # its version
    (Current(exists=True, version="other", digest=D2), True),        # the same bytes rewritten (D29)
    (Current(exists=True, version="other", digest=D3), False),
    (Current(exists=True, version="other"), False),
])
def test_a_completed_change_is_there_by_its_version_or_its_bytes(current: Current, ok: bool) -> None:
    at = current.version == "v"
    current = Current(exists=True, version=current.version, at_expected=at, digest=current.digest)
    plan = plan_of([witnessed(1, "a", Before.blob(D1, 3), after="v", digest=D2)], {"a": current})
    assert plan.refused is not ok


def test_a_moves_expectations_name_no_bytes() -> None:
    move = FileChange(id=1, op="rename", key="a", path="/a", before=Before.blob(D1, 3), after_version=None,
                      after_digest=D2, dest_key="b", dest_path="/b")
    got = spans([move])
    assert got["a"].expected.digest is None and got["b"].expected.digest is None
    delete = FileChange(id=2, op="delete", key="c", path="/c", before=Before.blob(D1, 3), after_version="v",
                        after_digest=D2)
    assert spans([delete])["c"].expected == Expected(kind="absent")
    edit = witnessed(3, "d", Before.blob(D1, 3), after="v", digest=D2)
    assert spans([edit])["d"].expected == Expected(kind="present", version="v", digest=D2)


def test_a_pending_change_that_never_happened_after_a_completed_one_is_taken_back_from_its_before() -> None:
    changes = [witnessed(1, "a", Before.blob(D1, 3), after="v", digest=D2),
               witnessed(2, "a", Before.blob(D2, 3), after=None, digest=D3)]
    for digest, ok in ((D2, True), (D3, True), (None, True), (digest_of(b"else"), False)):
        plan = plan_of(changes, {"a": Current(exists=True, version="x", digest=digest)})
        assert plan.refused is not ok, digest
        if ok:
            assert [(a.kind, a.digest) for a in plan.actions] == [("restore", D1)]

"""The sandbox vocabulary, texts and rules (``dsh_fs.fs.sandbox``, ``dsh_fs.tool_common.sandbox_texts``, ``dsh_fs.fs_sandbox.roots``):
every model-facing text against the reference's literal (docs/design/SANDBOX.md §1), the
escalation-pairing order, the temp areas and path containment (docs/SANDBOX.md)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from dsh_fs.core.errors import ToolInputError
from dsh_fs.fs import sandbox as modes
from dsh_fs.fs.errors import FsErrorCode, sandbox_denied
from dsh_fs.tool_common import sandbox_texts as sb
from dsh_fs.fs_sandbox.roots import canonical, is_under, lexically_under, temp_areas


def test_modes_and_wider_are_the_references() -> None:
    assert modes.MODES == ("read-only", "workspace-write", "danger-full-access")
    assert sb.ESCALATION_TARGETS == ("workspace-write", "danger-full-access")
    assert dict(modes.WIDER) == {"read-only": ("workspace-write", "danger-full-access"),
                              "workspace-write": ("danger-full-access",), "danger-full-access": ()}
    assert modes.strictly_wider("danger-full-access", "workspace-write")
    assert not modes.strictly_wider("workspace-write", "workspace-write")
    assert not modes.strictly_wider("workspace-write", "danger-full-access")
    assert not modes.strictly_wider("read-only", "read-only")


def test_parse_mode_refuses_an_unknown_mode() -> None:
    assert modes.parse_mode("workspace-write") == "workspace-write"
    with pytest.raises(ValueError, match=r'unknown sandbox mode "root" \(expected one of \["read-only",'):
        modes.parse_mode("root")


def test_every_text_is_the_references() -> None:
    assert sb.denial_marker("read-only") == "[sandbox: file access denied under read-only mode]"
    assert sb.escalation_hint("operation") == (
        "[sandbox: escalation available \u2014 retry this exact operation once with sandbox_permissions (the narrowest "
        "wider mode that suffices) + justification; the approval prompt asks the user]")
    assert modes.fence_denied_message("write", "/w/a", "workspace-write") == (
        'cannot write "/w/a": file access denied under workspace-write mode')
    err = sandbox_denied("delete", "/w/a", "read-only")
    assert (str(err), err.code) == ('cannot delete "/w/a": file access denied under read-only mode', "FS_SANDBOX_DENIED")
    assert FsErrorCode.SANDBOX_DENIED.value == "FS_SANDBOX_DENIED"
    assert sb.NOT_AVAILABLE == (
        "sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)")
    assert sb.SANDBOX_PERMISSIONS_DESCRIPTION == (
        "The wider sandbox mode this file operation needs. Only valid as a one-shot retry of an operation the "
        "sandbox just denied; requires justification and user approval.")
    assert sb.JUSTIFICATION_DESCRIPTION == (
        "Required with sandbox_permissions: one sentence for the user explaining why this exact file operation "
        "needs the wider access.")
    m = "danger-full-access"
    assert sb.not_wider(m, m) == (
        'sandbox escalation to "danger-full-access" is not strictly wider than this call\'s current '
        '"danger-full-access" mode')
    assert sb.no_approver(m) == (
        'sandbox escalation to "danger-full-access" requires approval, but no approval service is composed')
    assert sb.no_agent(m) == (
        'sandbox escalation to "danger-full-access" requires approval, but the call has no agent to route it through')
    assert sb.approval_rejected(m) == 'the user rejected escalating this operation to "danger-full-access"'
    assert sb.approval_cancelled(m) == 'approval for escalating to "danger-full-access" was cancelled'
    assert sb.approval_unavailable(m) == (
        'sandbox escalation to "danger-full-access" requires approval, but no approval channel is available')
    assert sb.escalation_reason(m, "to fix /etc/x") == "escalate sandbox to danger-full-access: to fix /etc/x"


def test_policy_context_texts() -> None:
    assert sb.policy_context("read-only", ["/w"]) == (
        "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify "
        "files in the standing mode. Do not refuse a required modification from this policy alone: try an available "
        "tool normally and follow any denial and escalation guidance it returns.")
    assert sb.policy_context("workspace-write", ["/w é", "/v"]) == (
        'Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may '
        'modify files under the session workspace: "/w é". Some platform temporary areas may also be writable.')
    assert '"/w", "/v".' in sb.policy_context("workspace-write", ["/w", "/v"], every_root=True)  # X3
    assert sb.policy_context("danger-full-access", []) == (
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by "
        "available operations.")


@pytest.mark.parametrize(("args", "message"), [
    ({"sandbox_permissions": "workspace-write"}, "invalid escalation: sandbox_permissions requires a justification"),
    ({"justification": "why"}, "invalid escalation: justification is only valid together with sandbox_permissions"),
    ({"justification": "   "}, "invalid escalation: justification is only valid together with sandbox_permissions"),
    ({"sandbox_permissions": "workspace-write", "justification": " \t"},
     "invalid justification: expected a non-empty sentence"),
])
def test_check_escalation_args_in_the_references_order(args: dict[str, str], message: str) -> None:
    with pytest.raises(ToolInputError) as info:
        sb.check_escalation_args(args)
    assert str(info.value) == message


def test_check_escalation_args_pairs() -> None:
    assert sb.check_escalation_args({}) == (None, None)
    assert sb.check_escalation_args({"sandbox_permissions": "danger-full-access", "justification": "j"}) == (
        "danger-full-access", "j")


@pytest.mark.parametrize(("env", "expected_tmp"), [
    ({}, "/tmp"),
    ({"TMPDIR": "{d}/"}, "{d}"),
    ({"TMP": "{d}"}, "{d}"),
    ({"TEMP": "{d}"}, "{d}"),
    ({"TMPDIR": "", "TMP": "{d}"}, "{d}"),
])
def test_temp_areas(tmp_path: Path, env: dict[str, str], expected_tmp: str) -> None:
    d = str(tmp_path.resolve())
    areas = temp_areas({k: v.format(d=d) for k, v in env.items()})
    assert areas[0] == os.path.realpath("/tmp")
    assert areas[-1] == canonical(expected_tmp.format(d=d))
    assert len(set(areas)) == len(areas)


def test_canonical_keeps_a_missing_path_as_written(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert canonical(str(tmp_path / "link")) == str((tmp_path / "real").resolve())
    assert canonical(str(tmp_path / "missing" / "x")) == str(tmp_path / "missing" / "x")


def test_is_under_by_spelling() -> None:
    assert is_under("/w", "/w") and is_under("/w/a/b", "/w")
    assert not is_under("/wx", "/w") and not is_under("/wx/a", "/w")
    assert is_under("/anything", "/")
    assert not lexically_under("/W/a", "/w")  # case-sensitive


def test_is_under_by_identity(tmp_path: Path) -> None:
    """Another spelling of the root (a symlink standing for a bind mount) still contains its files."""
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    assert is_under(str(real / "sub" / "new.txt"), str(alias))
    assert not is_under(str(tmp_path / "other" / "x"), str(alias))
    assert not is_under(str(real / "x"), str(tmp_path / "missing-root"))


segment = st.text(alphabet="abc.-_", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


@given(st.lists(segment, min_size=1, max_size=4), st.lists(segment, max_size=3), segment)
def test_lexical_containment_invariant(root: list[str], below: list[str], suffix: str) -> None:
    r = "/" + "/".join(root)
    assert lexically_under("/".join([r, *below]), r)
    assert not lexically_under(r + suffix, r)  # a sibling sharing a prefix is never inside


@given(st.one_of(st.text(max_size=20), st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2)))
def test_any_answer_but_the_four_is_unavailable(answer: object) -> None:
    """``fs_sandbox.approval.ask``: the callback's answer counts only when it is one of the four
    outcomes; anything else (and a raise) is ``unavailable`` — never a grant."""
    import anyio
    from hypothesis import assume

    from dsh_fs import Session
    from dsh_fs.fs_sandbox.approval import OUTCOMES, ApprovalRequest, ask

    assume(answer not in OUTCOMES)
    request = ApprovalRequest(tool_name="write", call_id="c", reason="r", requested_mode="danger-full-access",
                              justification="j", session=Session(), summary="Write /a")

    async def answers(_: ApprovalRequest) -> object:
        return answer

    async def raises(_: ApprovalRequest) -> object:
        raise RuntimeError(str(answer))

    assert anyio.run(ask, answers, request) == "unavailable"
    assert anyio.run(ask, raises, request) == "unavailable"


def test_one_line_escapes_what_could_fake_or_hide_a_line() -> None:
    from dsh_fs.fs_sandbox.approval import one_line

    assert one_line("Fix the typo in /w/a.txt — café") == "Fix the typo in /w/a.txt — café"
    assert one_line("a\nb\r\tc\x00\x7f\x85") == "a\\nb\\r\\tc\\u0000\\u007f\\u0085"
    assert one_line("x\u2028y\u2029z\u202e\u2066\u200f") == "x\\u2028y\\u2029z\\u202e\\u2066\\u200f"


def test_one_line_escapes_invisible_characters_and_whitespace_runs() -> None:
    """A zero-width or blank-looking character, a space other than U+0020, and a run of spaces
    (or one at either end) would hide a part of the line from the person: escaped."""
    from dsh_fs.fs_sandbox.approval import one_line

    assert one_line("a\u200bb\u200cc\u200dd\u2060e\ufefff\u2800g") == (
        "a\\u200bb\\u200cc\\u200dd\\u2060e\\ufefff\\u2800g")
    assert one_line("README.md" + " " * 3 + "/../x") == "README.md\\u0020\\u0020\\u0020/../x"
    assert one_line(" lead and trail ") == "\\u0020lead and trail\\u0020"
    assert one_line("nb\u00a0sp\u3000\u3164\U000e0041") == "nb\\u00a0sp\\u3000\\u3164\\udb40\\udc41"
    assert one_line("Fix a typo in the README.") == "Fix a typo in the README."


@given(st.text())
def test_one_line_is_one_line(text: str) -> None:
    from dsh_fs.fs_sandbox.approval import one_line

    shown = one_line(text)
    assert len(shown.splitlines()) <= 1 and not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert not any(c in shown for c in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert not any(unicodedata.category(c) in ("Cf", "Zs", "Zl", "Zp", "Cc") and c != " " for c in shown)
    assert "  " not in shown and not shown.startswith(" ") and not shown.endswith(" ")


def test_a_long_justification_is_cut_so_the_files_stay_in_sight() -> None:
    """The model writes the justification: shown at most ``REASON_SHOWN_MAX`` characters (as
    ``one_line`` prints them, never half an escape), then a note of how much was cut; the
    request's ``message`` puts the files on the next line."""
    from dsh_fs import Session
    from dsh_fs.fs_sandbox.approval import REASON_SHOWN_MAX, ApprovalRequest, shown_reason

    assert REASON_SHOWN_MAX == 500
    assert shown_reason("escalate sandbox to danger-full-access: Fix a typo.") == (
        "escalate sandbox to danger-full-access: Fix a typo.")
    assert shown_reason("x" * 10) == "x" * 10 and shown_reason("x" * 10, limit=10) == "x" * 10
    assert shown_reason("x" * 11, limit=10) == "x" * 10 + " … [cut: 1 more characters]"
    assert shown_reason("ab\ncd", limit=3) == "ab … [cut: 3 more characters]"  # not "ab\\"
    assert shown_reason("a b  c", limit=4) == "a b … [cut: 3 more characters]"  # the run seen whole
    assert shown_reason("\u202e" * 5, limit=12) == "\\u202e\\u202e … [cut: 3 more characters]"
    reason = "escalate sandbox to danger-full-access: " + "Fix a typo. " * 100_000
    request = ApprovalRequest(tool_name="write", call_id="c", reason=reason, requested_mode="danger-full-access",
                              justification=reason, session=Session(), summary="Write /w/.git/config")
    first, second = request.message.split("\n")
    assert first == reason[:500] + f" … [cut: {len(reason) - 500} more characters]"
    assert second == "Write /w/.git/config"


@given(st.text(), st.integers(min_value=0, max_value=40))
def test_shown_reason_is_one_line_within_its_bound(text: str, limit: int) -> None:
    from dsh_fs.fs_sandbox.approval import _shown, one_line, shown_reason

    shown = shown_reason(text, limit=limit)
    kept, cut, note = shown.partition(" … [cut: ")
    if not cut:
        assert shown == one_line(text) and len(shown) <= limit
        return
    assert "\n" not in shown and len(kept) <= limit and one_line(text).startswith(kept)
    count = int(note.removesuffix(" more characters]"))
    assert 0 < count <= len(text) and kept == "".join(_shown(text)[: len(text) - count])

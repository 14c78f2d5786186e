"""``ToolSwitches``: the profile switches of every layer above the seam (policy, tools, faces,
adapters) — one named field per deviation ID, as the providers' ``TextRules``.

Pure: no I/O. Each field is ``True`` in the ``default`` profile and ``False`` in
``reference`` (``core.profile.profile_switch``); ``ToolSwitches.of(profile)`` returns the one
value of each profile, built once. A new tool-layer deviation is a new field here, read where
the behaviour differs; ``grep`` for its ID finds this one declaration
(``tests/unit/dsh_fs/test_profile_switches.py`` checks that every deviation ID is decided by exactly
one switch, or is listed as structural in ``docs/DEVIATIONS.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..core.profile import Profile, ProfileSwitches, profile_switch

__all__ = ("ToolSwitches",)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSwitches(ProfileSwitches):
    """What the policy, the tools and the faces do differently per profile (DEVIATIONS)."""

    # -- file tools (read, write, edit) and the policy ------------------------------------------
    near_match_hints: bool = profile_switch("D5, D18")
    """D5/D18: ``old_string was not found`` (and a face's "no match") gets a ``Hint: …`` line
    when a near match exists or the edit looks applied"""
    crlf_only_change_refused: bool = profile_switch("D7")
    """D7: an ``edit`` whose strings differ only by CRLF vs LF fails "must differ\""""
    record_absence: bool = profile_switch("D8")
    """D8: a ``read`` (or a face's ``view``) that finds no file records an absence, and the
    policy keeps absences (a deleted file may be recreated)"""
    remedies: bool = profile_switch("D9")
    """D9: ``FS_STALE_VERSION`` / ``FS_NOT_OBSERVED`` messages end with a recovery remedy"""
    stale_diffs: bool = profile_switch("D30")
    """D30: a stale refusal of a file the owner last saw whole ends with a capped unified diff
    from what it saw to what is there now (``tool_fs.stale_diff``)"""
    always_progress: bool = profile_switch("D10")
    """D10: a read always makes progress (a first line over ``readMaxBytes`` is shown cut)"""
    unicode_arguments: bool = profile_switch("D11")
    """D11: text arguments with a lone surrogate are refused, nothing written"""
    exact_truncation: bool = profile_switch("D13")
    """D13: a cut line always shows the truncation suffix"""
    prompt_fits_deployment: bool = profile_switch("D14")
    """D14: the write/edit prompt sections claim the policy's requirement only while a policy
    decides the intent event"""
    lookalike_names: bool = profile_switch("D19")
    """D19: a ``read`` of a missing path names an existing lookalike name"""
    edit_missing_first: bool = profile_switch("D26")
    """D26: ``edit`` of a missing path says ``not found`` (with the lookalike hint), not "read
    it first" (one ``stat``, only after a refusal)"""
    edit_not_file_first: bool = profile_switch("D27")
    """D27: ``edit`` of a directory or another non-file says ``not a regular file``"""
    read_on_in_long_lines: bool = profile_switch("D35")
    """D35: ``read`` takes a ``column`` (the first character of line ``offset`` to show), so a
    line cut at ``readMaxLineLength`` can be read on"""

    # -- search tools (glob, grep) --------------------------------------------------------------
    newest_first: bool = profile_switch("S1")
    """S1: ``glob`` lists newest first"""
    sorted_by_path: bool = profile_switch("S2")
    """S2: ``grep`` reports files in path order"""
    search_texts: bool = profile_switch("S3")
    """S3: failure texts name ripgrep and the time budget, not a bash executor"""
    first_page_on_overflow: bool = profile_switch("S4")
    """S4: output over ``rawOutputMaxBytes`` stops the search and shows the first page"""
    target_errors: bool = profile_switch("S5")
    """S5: a missing ``path`` is ``FS_NOT_FOUND``; ``glob`` of a file ``FS_NOT_DIRECTORY``"""
    odd_names: bool = profile_switch("S6")
    """S6: non-UTF-8 file names are shown with U+FFFD; a NUL argument is an argument error"""
    near_miss_hints: bool = profile_switch("S7")
    """S7: a ``glob`` that finds nothing for a literal name gets ``read``'s lookalike hint"""
    follow_links: bool = profile_switch("S8")
    """S8: ripgrep follows symlinks (``--follow``); none leading out of the containment root
    is walked or shown, and its loop reports are no failure"""
    absolute_patterns: bool = profile_switch("S9")
    """S9: an absolute ``glob`` pattern inside the workspace is matched from its directory"""
    patterns_from_path: bool = profile_switch("S10")
    """S10: a ``glob`` pattern with a directory part is matched from ``path`` too"""
    match_windows: bool = profile_switch("S11")
    """S11: a match beyond ``grepMaxLineBytes`` of a long line is shown in a window around it"""
    multiline_advice: bool = profile_switch("S12")
    """S12: a pattern with a line break is refused with advice the tool can follow (ripgrep's
    names a ``--multiline`` flag the tool does not have)"""
    skipped_files_said: bool = profile_switch("S13")
    """S13: ``grep`` of a ``path`` that ignore or hidden rules would skip searches it whole;
    otherwise a line says how many files those rules left out, and how to search them"""
    binary_text: bool = profile_switch("S14")
    """S14: ``grep`` searches files ripgrep would drop as binary (``--text``); control bytes in
    a shown line are escaped (``\\u0000``) and a note names the files that hold NUL bytes"""
    vanished_entries_skipped: bool = profile_switch("S15")
    """S15: an entry that is not there when ripgrep reaches it (a dangling symlink under S8's
    ``--follow``, a file or directory removed during the walk) is left out, not a failure"""

    # -- list --------------------------------------------------------------------------------------
    list_served: bool = profile_switch("L1")
    """L1: ``create_context`` (and so ``dsh-fs mcp``, ``schema``, ``prompt``) loads ``list``
    unless told otherwise"""
    list_sizes: bool = profile_switch("L2")
    """L2: a regular file's size follows its name in a listing"""
    list_escape_hidden: bool = profile_switch("L3")
    """L3: a quoted name in a listing shows DEL and C1 controls escaped, never raw; a name
    with a line separator or a format character (bidi, zero-width) is quoted with it escaped"""
    read_directory_hint: bool = profile_switch("L4")
    """L4: ``read`` of a directory adds a hint naming ``list`` (when ``list`` is registered)"""

    # -- editing faces ---------------------------------------------------------------------------
    normalized_view: bool = profile_switch("E8")
    """E8: ``str_replace_editor``'s ``view`` shows lines LF-normalized"""
    str_replace_is_edit: bool = profile_switch("E16")
    """E16: ``str_replace`` is ``edit`` with a unique match (else the raw-text match)"""
    bounded_directory_view: bool = profile_switch("E18")
    """E18: a directory ``view`` without ``max_characters`` is clipped at 16,000 characters,
    its rows in code-point order (the reference: UTF-16 order)"""
    refuse_no_op_replace: bool = profile_switch("E19")
    """E19: ``str_replace`` with ``new_str`` equal to ``old_str`` is refused before any I/O"""
    capped_file_view: bool = profile_switch("E20")
    """E20: an Anthropic file ``view`` without ``max_characters`` is clipped at 16,000
    characters, with the ``view_range`` that continues it"""
    content_lines: bool = profile_switch("E21")
    """E21: ``str_replace_editor`` counts and inserts lines as the Anthropic face does (a final
    line break ends the last line; ``new_str`` of ``insert`` is whole lines)"""
    clamp_view_range: bool = profile_switch("E22")
    """E22: a ``view_range`` ending past the last line shows to the end, with a note saying so"""
    undo_edit: bool = profile_switch("H10")
    """H10: ``str_replace_editor`` takes OpenHands' ``undo_edit`` command (the last change this
    owner made to the file, taken back on the history) when the context records a history"""
    patch_names_its_operation: bool = profile_switch("E25")
    """E25: a patch refused for an unread file says ``update``/``delete``/``move requires reading
    "<p>" first`` (the patch's own operation), not the policy's ``edit requires …``"""

    # -- images (read_image, docs/IMAGES.md) ----------------------------------------------------
    image_read_hint: bool = profile_switch("I1")
    """I1: ``read``'s binary-file error on an image path says how to see the image"""
    image_errors_name_the_file: bool = profile_switch("I2")
    """I2: the attachment texts that name no file (``Image is empty.``, ``Unsupported or
    malformed image data.``) say which file they are about"""
    refuse_animated_gif: bool = profile_switch("I3")
    """I3: ``read_image`` refuses an animated GIF (OpenAI accepts only non-animated GIFs)"""
    image_view_hint: bool = profile_switch("I5")
    """I5: the text editors' ``view`` binary-file error on an image path carries I1's hint"""

    # -- formats: notebooks, PDFs (docs/NOTEBOOKS.md, docs/PDF.md) -------------------------------
    notebook_cells: bool = profile_switch("F1")
    """F1: ``read`` of a ``.ipynb`` notebook shows its cells (sources, outputs as text, images
    summarised), not its JSON text"""
    notebook_edit_names_edit: bool = profile_switch("F2")
    """F2: ``notebook_edit``'s refusal of a path that is not a notebook names dsh-fs's ``edit``
    tool, not Claude Code's ``FileEdit``"""
    pdf_read_hint: bool = profile_switch("F6")
    """F6: ``read``'s not-text error on a ``.pdf`` path says how to read the PDF's text"""

    # -- sandbox modes (docs/SANDBOX.md) ---------------------------------------------------------
    escalation_needs_sandbox: bool = profile_switch("X1")
    """X1: ``sandbox_permissions``/``justification`` where no sandbox is composed are refused
    (``sandbox_permissions is not available in this composition …``), not ignored"""
    patch_escalation: bool = profile_switch("X2")
    """X2: under a sandbox, ``apply_patch`` advertises the escalation fields (one approval
    covers the whole patch) and its denial carries the escalation hint"""
    policy_names_every_root: bool = profile_switch("X3")
    """X3: the ``sandbox:policy`` prompt context names every workspace root, not only the first"""
    escalation_only_when_grantable: bool = profile_switch("D37")
    """D37: the escalation fields and the escalation hint are offered only when an approval
    can be asked for (an approval callback that reaches a person: not an MCP client without
    elicitation), and ``dsh-fs mcp``'s instructions name the sandbox mode"""
    sandbox_cwd_as_spelled: bool = profile_switch("X4")
    """X4: under a sandbox, ``write``/``edit`` resolve a relative path against the session's cwd as
    spelled (as ``read`` does), not against its canonical path (symlinks resolved)"""
    dotdot_checked: bool = profile_switch("X6")
    """X6: an escalated call whose path has a ``..`` after a missing name or a non-directory is
    refused before the person is asked (the reference resolves ``..`` lexically)"""

    @staticmethod
    def of(profile: Profile | str | None) -> ToolSwitches:
        """The switches of ``profile`` (``None`` = default): one shared frozen value per profile.

        :raises ValueError: unknown profile
        """
        return _of(Profile.parse(profile))


@cache
def _of(profile: Profile) -> ToolSwitches:
    return ToolSwitches.for_profile(profile)

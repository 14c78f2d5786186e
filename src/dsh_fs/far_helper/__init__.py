"""The helper: what runs on the far side of a command channel (``dsh_fs.fs_channel``,
docs/CHANNELS.md; DEVIATIONS C1, C4) — dsh-fs's local provider and the search tools' host
operations behind the channel protocol, loaded from the bundle the near side brought.

| module | owns |
|---|---|
| ``serve`` | the serving loop: frames in, requests to the far side's local provider, answers out |
| ``search`` | ripgrep where the files are (which ripgrep, runs with S8's rules) and the directory questions |
"""

__all__ = ()

"""Providers over a command channel: a container (``docker://``, ``podman://``,
``kubectl://``), a remote machine (``ssh://``), a cloud sandbox (an async "run this command"
callable) — every primitive runs on the far side in dsh-fs's own local provider, behind a
framed protocol over the command's stdin and stdout (docs/CHANNELS.md; DEVIATIONS C1–C19).

| module | owns |
|---|---|
| ``filesystem`` | ``ChannelFileSystem``: the near side's provider, one request per primitive, the prefetch of ``resolve`` |
| ``client`` | one helper connection: start-up, pipelined requests, streams with credit, abort signals carried over |
| ``channels`` | how a command reaches the far side: local processes, ``ssh``, container runtimes, URLs |
| ``execs`` | channels made of an async "run this command with this stdin" callable (sandbox SDKs, deepagents' ``execute``) |
| ``relay`` | the program each exec runs on the far side, and the hub it starts there that keeps the helper |
| ``search`` | the far side as the search tools' search host: which ripgrep, runs, directory questions |
| ``boot`` | the bootstrap program the far side runs first: version check, bundle cache, hash check (the helper itself: ``far_helper``) |
| ``bundle`` | the helper's code as one zip, with its SHA-256 |
| ``codec`` | the seam's values as JSON |
| ``wire`` | frames on a byte stream |
| ``errors`` | what the provider says when the channel, not a file, fails |
"""

from .channels import (
    Channel as Channel,
    CommandChannel as CommandChannel,
    SshChannel as SshChannel,
    channel_for_url as channel_for_url,
    container_channel as container_channel,
    kubectl_channel as kubectl_channel,
)
from .execs import ExecChannel as ExecChannel, shell_exec as shell_exec
from .filesystem import ChannelFileSystem as ChannelFileSystem

__all__ = (
    "Channel",
    "ChannelFileSystem",
    "CommandChannel",
    "ExecChannel",
    "SshChannel",
    "channel_for_url",
    "container_channel",
    "kubectl_channel",
    "shell_exec",
)

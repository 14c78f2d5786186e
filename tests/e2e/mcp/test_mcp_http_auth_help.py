"""A ``401`` of ``dsh-fs mcp --http`` says how to authenticate, and nothing invites OAuth.

The MCP authorization specification makes authorization optional and has a client start
OAuth from the server's Protected Resource Metadata (RFC 9728): a ``resource_metadata`` in
the ``WWW-Authenticate`` challenge, or ``/.well-known/oauth-protected-resource``. This server
has no OAuth, so its challenge names no metadata, every discovery document is ``404`` (for
``/.well-known/oauth-authorization-server`` too), and both answers say what to send instead:
``Authorization: Bearer`` with a token the server showed or wrote to its token file.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402

from dsh_fs.mcp.http.gate import NO_OAUTH, UNAUTHORIZED  # noqa: E402
from httpkit import INITIALIZE, http_server, raw_post  # noqa: E402

DISCOVERY = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/register",
)


def test_a_401_says_how_to_authenticate_and_no_oauth_is_advertised(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main(url: str) -> None:
        base = url.removesuffix("/mcp")
        async with httpx2.AsyncClient(timeout=30) as http:
            status, headers, answer = await raw_post(http, url, INITIALIZE)
            assert status == 401
            assert answer == {"error": "invalid_token", "error_description": UNAUTHORIZED}
            challenge = headers["www-authenticate"]
            assert challenge == f'Bearer error="invalid_token", error_description="{UNAUTHORIZED}"'
            assert "resource_metadata" not in challenge
            assert "Authorization: Bearer TOKEN" in UNAUTHORIZED and "--token-file" in UNAUTHORIZED
            for path in DISCOVERY:
                for method in ("GET", "POST"):
                    response = await http.request(method, base + path)
                    assert response.status_code == 404, (method, path)
                    assert response.json() == {"error": "not_found", "error_description": NO_OAUTH}

    with http_server(root) as endpoint:
        anyio.run(main, endpoint.url)

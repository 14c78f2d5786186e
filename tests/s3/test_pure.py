"""Pure parts of the S3 provider: locations and URLs, rooted path resolution (``..`` never
leaves the workspace), failure classification and the error mapping. No server needed.

Not covered here: anything that talks to S3 (``test_provider.py``).
"""

from __future__ import annotations

import pytest

from dsh_fs.fs.errors import FsError
from dsh_fs.fs.rooted import check_root, resolve_rooted
from dsh_fs.fs_s3 import S3FileSystem, from_url, parse_url
from dsh_fs.fs_s3.errors import S3Failure, failure_of, fs_error
from dsh_fs.fs_s3.location import S3Location, normalize_prefix


@pytest.mark.parametrize(
    ("url", "bucket", "prefix"),
    [
        ("s3://b", "b", ""),
        ("s3://b/", "b", ""),
        ("s3://b/team/ws", "b", "team/ws/"),
        ("s3://b//team//ws/", "b", "team/ws/"),
        ("s3://b/a%20b", "b", "a b/"),
    ],
)
def test_parse_url(url: str, bucket: str, prefix: str) -> None:
    assert parse_url(url) == S3Location(bucket, prefix)


@pytest.mark.parametrize("url", ["", "b/ws", "s3://", "s3:///ws", "https://b/ws", "s3://b/../x"])
def test_parse_url_rejects(url: str) -> None:
    with pytest.raises(ValueError):
        parse_url(url)


def test_location_keys() -> None:
    loc = S3Location("bkt", "/team/ws")
    assert loc.prefix == "team/ws/"
    assert loc.object_key("src/a.py") == "team/ws/src/a.py"
    assert loc.dir_prefix("src") == "team/ws/src/" and loc.dir_prefix("") == "team/ws/"
    assert loc.target_key("src/a.py") == "s3://bkt/team/ws/src/a.py"
    assert loc.target_key("") == "s3://bkt/team/ws/" == loc.url
    assert loc.rel_of_target_key("s3://bkt/team/ws/src/a.py") == "src/a.py"
    assert loc.rel_of_target_key("s3://bkt/team/other") is None
    assert normalize_prefix("") == "" and normalize_prefix("///") == ""


def test_from_url_builds_a_provider_without_touching_the_network() -> None:
    fs = from_url("s3://bkt/team/ws", endpoint_url="http://127.0.0.1:1", profile="reference")
    assert isinstance(fs, S3FileSystem)
    assert fs.location == S3Location("bkt", "team/ws/") and fs.profile.value == "reference"
    assert fs.store.endpoint_url == "http://127.0.0.1:1" and fs.store.requests == 0


def test_part_size_below_the_s3_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="part_size"):
        S3FileSystem(bucket="b", part_size=1024)


@pytest.mark.parametrize(
    ("path", "base", "root", "display", "rel"),
    [
        ("a.txt", "/", "/", "/a.txt", "a.txt"),
        ("a.txt", "/sub", "/", "/sub/a.txt", "sub/a.txt"),
        ("../a.txt", "/sub", "/", "/a.txt", "a.txt"),
        ("/x//y/./z/", "/sub", "/", "/x/y/z", "x/y/z"),
        (".", "/", "/", "/", ""),
        ("src/a.py", "/ws", "/ws", "/ws/src/a.py", "src/a.py"),
        ("/ws", "/ws/src", "/ws", "/ws", ""),
        ("../../ws/b", "/ws/src", "/ws", "/ws/b", "b"),
    ],
)
def test_resolve_rooted(path: str, base: str, root: str, display: str, rel: str) -> None:
    found = resolve_rooted(path, base, check_root(root))
    assert (found.display, found.rel) == (display, rel)


@pytest.mark.parametrize(
    ("path", "base", "root", "display"),
    [("/etc/passwd", "/ws", "/ws", "/etc/passwd"), ("..", "/ws", "/ws", "/"), ("/ws/../ws2/a", "/ws", "/ws", "/ws2/a"),
     ("/wsx/a", "/ws", "/ws", "/wsx/a"), ("../../x", "/ws/src", "/ws", "/x"), ("a/../../..//x/", "/ws", "/ws", "/x")],
)
def test_resolve_rooted_never_leaves_the_root(path: str, base: str, root: str, display: str) -> None:
    """The refusal shows the resolved display path, as the local provider does (tracker issue 12)."""
    with pytest.raises(FsError) as caught:
        resolve_rooted(path, base, check_root(root))
    assert caught.value.code == "FS_PERMISSION_DENIED"
    assert str(caught.value) == f'cannot resolve "{display}": outside the workspace "{root}"'


@pytest.mark.parametrize(("path", "display"), [("..", "/"), ("../x", "/x"), ("a/../../x", "/x"), ("/../../x", "/x")])
def test_dot_dot_above_slash_is_slash(path: str, display: str) -> None:
    """``/..`` is ``/`` (POSIX, and the local provider): at the display root ``/`` nothing climbs out."""
    found = resolve_rooted(path, "/", check_root("/"))
    assert found.display == display and found.rel == display.strip("/")


def test_resolve_rooted_blank_and_nul() -> None:
    with pytest.raises(FsError, match="^file_path must be a non-empty string$"):
        resolve_rooted(" \t", "/", "/")
    with pytest.raises(FsError) as caught:
        resolve_rooted("a\0b", "/", "/")
    assert caught.value.code == "FS_PERMISSION_DENIED"
    assert str(caught.value) == 'cannot resolve "/a\\0b": path contains a NUL byte'


@pytest.mark.parametrize("root", ["", "ws", "/ws/../x", "/./ws"])
def test_check_root_refuses(root: str) -> None:
    with pytest.raises(ValueError):
        check_root(root)


class _ClientError(Exception):
    def __init__(self, status: int, code: str, message: str | None) -> None:
        super().__init__(f"{code}: {message}")
        error = {"Code": code}
        if message is not None:
            error["Message"] = message
        self.response = {"Error": error, "ResponseMetadata": {"HTTPStatusCode": status}}


@pytest.mark.parametrize(
    ("exc", "precondition", "missing", "denied"),
    [
        (_ClientError(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"), True, False, False),
        (_ClientError(409, "ConditionalRequestConflict", "A conflicting operation occurred"), True, False, False),
        (_ClientError(404, "NoSuchKey", "The specified key does not exist."), False, True, False),
        (_ClientError(404, "404", None), False, True, False),
        (_ClientError(404, "NoSuchBucket", "The specified bucket does not exist"), False, False, False),
        (_ClientError(403, "AccessDenied", "Access Denied"), False, False, True),
        (_ClientError(403, "403", None), False, False, True),
        (_ClientError(500, "InternalError", "We encountered an internal error"), False, False, False),
        (ConnectionError("Could not connect"), False, False, False),
    ],
)
def test_failure_classification(exc: Exception, precondition: bool, missing: bool, denied: bool) -> None:
    failure = failure_of(exc)
    assert (failure.precondition_failed, failure.not_found, failure.access_denied) == (precondition, missing, denied)


def test_error_mapping_messages() -> None:
    denied = fs_error(failure_of(_ClientError(403, "AccessDenied", "Access Denied")), "read", "/a.txt")
    assert (denied.code, str(denied)) == ("FS_PERMISSION_DENIED", 'cannot read "/a.txt": permission denied')
    bucket = fs_error(failure_of(_ClientError(404, "NoSuchBucket", "The specified bucket does not exist")), "edit", "/a")
    assert (bucket.code, str(bucket)) == ("FS_IO_ERROR", 'cannot edit "/a": The specified bucket does not exist')
    network = fs_error(failure_of(ConnectionError("Could not connect to the endpoint URL")), "write", "/b")
    assert (network.code, str(network)) == ("FS_IO_ERROR", 'cannot write "/b": Could not connect to the endpoint URL')
    assert isinstance(network.cause, S3Failure)


def test_resolve_rooted_has_no_home_directory() -> None:
    """DEVIATIONS D20 on a rooted provider (memory, S3): ``~``/``~/…`` is refused in the
    default profile (``home_tilde``), a literal name otherwise; ``./~`` and ``~x`` are names."""
    for path in ("~", "~/a.txt"):
        with pytest.raises(FsError) as caught:
            resolve_rooted(path, "/", "/", home_tilde=True)
        assert caught.value.code == "FS_NOT_FOUND" and str(caught.value).startswith(f'cannot resolve "{path}": there is no home')
        assert resolve_rooted(path, "/", "/").display == "/" + path
    assert resolve_rooted("./~/a.txt", "/", "/", home_tilde=True).display == "/~/a.txt"
    assert resolve_rooted("~x", "/", "/", home_tilde=True).display == "/~x"


@pytest.mark.parametrize(("url", "said"), [
    ("s3://b?x/p", "S3 bucket name 'b?x': only lowercase letters, digits, dots and hyphens"),
    ("s3://My/p", "S3 bucket name 'My': only lowercase letters, digits, dots and hyphens"),
    ("s3://b/a%0Ab", "S3 prefix 'a\\nb': control characters are not allowed"),
    ("s3://b/a\x00b", "S3 prefix 'a\\x00b': control characters are not allowed"),
])
def test_a_url_an_s3_service_cannot_hold_is_refused(url: str, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_url(url)
    assert str(refused.value) == said

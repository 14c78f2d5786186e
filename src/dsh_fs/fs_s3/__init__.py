"""The S3-compatible provider: ``S3FileSystem`` and ``from_url`` (optional extra ``[s3]``).

Importing this package needs nothing beyond dsh-fs; aiobotocore is imported when the first
request is made. See ``docs/S3.md`` for fleet setup, atomicity and round trips.
"""

from .filesystem import S3FileSystem as S3FileSystem, from_url as from_url, from_urls as from_urls
from .location import S3Location as S3Location, parse_url as parse_url

__all__ = ("S3FileSystem", "S3Location", "from_url", "from_urls", "parse_url")

"""Where the Marquez API lives on its server, and which URLs are refused as a base URL."""

from __future__ import annotations

import pytest

from emr_lineage.marquez.api import base_url, http_url


@pytest.mark.parametrize("url", ["http://[::1", "http://h:port", "http://h:99999"])
def test_a_url_whose_host_or_port_cannot_be_read_is_refused_in_our_words(url: str) -> None:
    with pytest.raises(ValueError) as raised:
        base_url(url)
    message = str(raised.value)
    assert message == f"{url!r} is not a URL: its host or port cannot be read, e.g. http://localhost:5000"


def test_another_base_url_gets_its_own_example() -> None:
    with pytest.raises(ValueError, match=r"^'http://' is not an http\(s\) URL with a host, e.g. https://mirror/$"):
        http_url("http://", example="https://mirror/")
    assert http_url(" https://mirror/spec/ ") == "https://mirror/spec/"
    assert base_url("http://m:5000/api/v1/") == "http://m:5000"

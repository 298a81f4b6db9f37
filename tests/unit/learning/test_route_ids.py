"""Route ids that name their owner (``router.learning.route_ids``)."""

from __future__ import annotations

from router.learning.route_ids import made_for, mint

KEY = b"k" * 32


def test_an_id_is_its_principals_alone_and_cannot_be_forged() -> None:
    route_id = mint(KEY, "alice")
    assert made_for(KEY, route_id, "alice") is True
    assert made_for(KEY, route_id, "bob") is False
    assert made_for(b"another key" * 3, route_id, "alice") is False
    nonce, _, mac = route_id.partition(".")
    assert made_for(KEY, f"{nonce}.{mac[::-1]}", "alice") is False
    assert made_for(KEY, nonce, "alice") is None  # an id with no MAC tells nothing
    assert mint(KEY, "alice") != route_id

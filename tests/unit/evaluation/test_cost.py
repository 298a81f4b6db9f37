"""The prompt-cache arithmetic of ``skill-router eval --sessions`` (``router.evaluation.cost``),
on a case computed by hand."""

from __future__ import annotations

import pytest

from router.evaluation.cost import ANTHROPIC, OPENAI, Turn, input_cost

# tokens = characters / 4: message 2 then 1, catalog 10 then 5 (another text), reveal 3 then
# none, stable 1, the whole catalog 20; base system prompt 10, replies 2.
TURNS = [Turn("m" * 8, "c" * 40, "r" * 12, "s" * 4, 80), Turn("n" * 4, "d" * 20, "", "s" * 4, 80)]


@pytest.mark.parametrize(("layout", "anthropic", "openai"), [
    # turn 1 writes 10+20+2 = 32; turn 2 (35) reads those 32, writes reply 2 + message 1
    ("whole", 32 * 1.25 + 32 * 0.1 + 3 * 1.25, 32 + 32 * 0.1 + 3),
    # turn 1 writes 10+10+2 = 22; turn 2 (10+5+2+2+1 = 20): the catalog changed, so the
    # system prompt is written again whole on Anthropic (its cache ends at the system prompt's
    # end); OpenAI still reads the 10 of the base prompt and writes the other 10
    ("per_turn", 22 * 1.25 + 20 * 1.25, 22 + 10 * 0.1 + 10),
    # turn 1 writes 10+1+2+3 = 16; turn 2 (19) reads them, writes reply 2 + message 1
    ("reveal", 16 * 1.25 + 16 * 0.1 + 3 * 1.25, 16 + 16 * 0.1 + 3),
])
def test_a_two_turn_conversation(layout: str, anthropic: float, openai: float) -> None:
    assert input_cost(TURNS, layout, ANTHROPIC, base=10, reply=2) == pytest.approx(anthropic)
    assert input_cost(TURNS, layout, OPENAI, base=10, reply=2) == pytest.approx(openai)
    assert anthropic == pytest.approx({"whole": 46.95, "per_turn": 52.5,
                                       "reveal": 25.35}[layout])


def test_an_unchanged_catalog_is_read_from_the_cache() -> None:
    same = [TURNS[0], Turn("n" * 4, "c" * 40, "", "s" * 4, 80)]
    # turn 2: 10+10+2+2+1 = 25, the 22 of turn 1 read
    assert input_cost(same, "per_turn", ANTHROPIC, base=10, reply=2) == pytest.approx(
        22 * 1.25 + 22 * 0.1 + 3 * 1.25)
    with pytest.raises(ValueError, match="unknown layout"):
        input_cost(same, "sideways", ANTHROPIC)

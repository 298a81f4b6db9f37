"""The input cost of a conversation's prompts under a model API's prompt cache (pure).

A prompt is a sequence of segments (the system prompt, each user message, reveal and reply),
each with a key that says whether it is the same bytes as a segment of the previous prompt.
Each turn's prompt is read from the cache up to its first segment that differs from the previous
turn's prompt (0.1x the input price), and the rest is written to the cache (1.25x on Anthropic's
Messages API; OpenAI bills uncached input at 1x). Anthropic reads a cache only at a breakpoint
(``cache_control``: here the end of the system prompt and of the previous request), so a
system prompt whose catalog changed is written again whole, its base part too; OpenAI caches
any common prefix, so its base part is still read. Tokens are characters / 4. Costs are in
token-equivalents of uncached input.

The three layouts ``skill-router eval --sessions`` compares:

- ``whole``: every skill's catalog in the system prompt, the same on every turn;
- ``per_turn``: the turn's ``catalog_text`` in the system prompt (it changes when the routed
  skills do, and the whole conversation after it is then written again);
- ``reveal``: ``stable_text`` in the system prompt, each turn's ``reveal_text`` after the user's
  message, kept in the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BASE_TOKENS = 2000  # the agent's own system prompt
REPLY_TOKENS = 400  # each assistant reply
LAYOUTS = ("whole", "per_turn", "reveal")


@dataclass(frozen=True)
class Rates:
    """Input price multipliers of a cache read and of a cache write (uncached input = 1)."""

    read: float
    write: float
    any_prefix: bool  # any common prefix is read (else only up to a breakpoint)


ANTHROPIC = Rates(read=0.1, write=1.25, any_prefix=False)
OPENAI = Rates(read=0.1, write=1.0, any_prefix=True)


@dataclass(frozen=True)
class Turn:
    """What one turn adds: the user's message, and the blocks the router gave it."""

    message: str
    catalog_text: str  # the per-turn block
    reveal_text: str  # the skills new to the session
    stable_text: str  # the cached system block
    whole_chars: int  # the length of the catalog of every skill


Segment = tuple[str, float]  # (what identifies its bytes, tokens)


def tokens(chars: int) -> float:
    return chars / 4


def prompts(turns: Sequence[Turn], layout: str, base: float = BASE_TOKENS,
            reply: float = REPLY_TOKENS, any_prefix: bool = True) -> list[list[Segment]]:
    """Each turn's prompt, as segments, under ``layout`` (one of ``LAYOUTS``); without
    ``any_prefix`` the system prompt is one segment (read whole or not at all)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    out: list[list[Segment]] = []
    history: list[Segment] = []
    for i, turn in enumerate(turns):
        if layout == "whole":
            system = [("base", base), ("whole", tokens(turn.whole_chars))]
        elif layout == "per_turn":
            system = [("base", base), (f"catalog:{turn.catalog_text}",
                                       tokens(len(turn.catalog_text)))]
            if not any_prefix:
                system = [(system[1][0], base + system[1][1])]
        else:
            system = [("base", base), (f"stable:{turn.stable_text}",
                                       tokens(len(turn.stable_text)))]
        said = [(f"user:{i}", tokens(len(turn.message)))]
        if layout == "reveal" and turn.reveal_text:
            said.append((f"reveal:{i}", tokens(len(turn.reveal_text))))
        out.append([*system, *history, *said])
        history = [*history, *said, (f"reply:{i}", reply)]
    return out


def cached_tokens(previous: Sequence[Segment], prompt: Sequence[Segment]) -> float:
    """Tokens of ``prompt`` read from the cache: its common prefix with ``previous``."""
    read = 0.0
    for (key, size), (old, _) in zip(prompt, previous, strict=False):
        if key != old:
            break
        read += size
    return read


def input_cost(turns: Sequence[Turn], layout: str, rates: Rates, base: float = BASE_TOKENS,
               reply: float = REPLY_TOKENS) -> float:
    """The input cost of the whole conversation under ``layout`` at ``rates``."""
    total, previous = 0.0, list[Segment]()
    for prompt in prompts(turns, layout, base, reply, rates.any_prefix):
        size = sum(s for _, s in prompt)
        read = cached_tokens(previous, prompt)
        total += rates.read * read + rates.write * (size - read)
        previous = prompt
    return total

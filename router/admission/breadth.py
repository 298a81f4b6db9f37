"""A description built to match everything, by its own text (pure), whatever the catalog's size:
one word repeated (a low type/token ratio, or one word holding a large share of the words),
or many unrelated domains named. The hub measure (``hubs``) finds the same aim by retrieval in
a catalog large enough to have a distribution; these need no crowd."""

from __future__ import annotations

import re
from collections import Counter

from router.admission.model import Finding, Severity

MAX_SHARE = 0.3  # one word's share of the content words, at least REPEATS times
REPEATS = 5
MIN_RATIO = 0.4  # distinct / all content words, over at least RATIO_WORDS words (fewer say
# too little to judge their variety)
RATIO_WORDS = 30
MAX_DOMAINS = 5  # distinct domains named; more is a description aimed at everything

_WORD = re.compile(r"[a-z][a-z0-9+#'-]*")
_STOP_WORDS = (
    "a an the and or of for to in on at by with from as is are be this that these those it its "
    "use used using when whenever user users any all you your can will into via such e.g i.e "
    "also if not but more other etc skill skills task tasks help helps including include "
    "includes like about work working files file data new create creating make")
_STOP = frozenset(_STOP_WORDS.split())
# Broad domains of human activity, each a few words that name it unambiguously.
DOMAINS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    "finance": "finance financial stocks stock investing investment budget budgeting tax taxes "
               "accounting banking loans mortgage crypto cryptocurrency trading",
    "health": "health medical medicine diagnosis symptoms doctor nutrition diet fitness workout "
              "exercise therapy mental",
    "law": "legal law lawyer contract contracts lawsuit compliance litigation",
    "cooking": "cooking recipe recipes cuisine baking meal meals",
    "travel": "travel flights flight hotel hotels vacation itinerary booking trip trips",
    "sports": "sports football soccer basketball baseball tennis golf scores",
    "music": "music song songs lyrics playlist playlists guitar",
    "film": "movie movies film films tv television netflix shows",
    "gaming": "game games gaming videogame videogames esports",
    "weather": "weather forecast forecasts climate temperature",
    "shopping": "shopping ecommerce e-commerce products purchase coupons deals retail",
    "real-estate": "real-estate realestate property properties rent renting apartment housing",
    "education": "homework tutoring education school university exam exams studying",
    "science": "physics chemistry biology astronomy science scientific",
    "mathematics": "math mathematics algebra calculus equations geometry statistics",
    "history": "history historical",
    "religion": "religion religious astrology horoscope horoscopes spirituality tarot",
    "relationships": "dating relationship relationships romance wedding parenting",
    "pets": "pets pet dog dogs cat cats veterinary",
    "gardening": "gardening garden plants",
    "automotive": "car cars automotive vehicle vehicles",
    "fashion": "fashion clothing outfit outfits beauty makeup skincare",
    "news": "news politics political elections election",
    "software": "code coding programming debugging software developer",
    "writing": "essay essays poetry poem poems novel fiction stories story",
    "translation": "translation translate translating languages",
    "careers": "resume resumes career careers interview interviews hiring jobs",
    "email": "email emails inbox calendar meetings scheduling",
    "art": "drawing painting art artwork design",
    "security": "hacking cybersecurity security malware",
}.items()}


# A claim on every topic, whatever the wording of the rest.
_UNIVERSAL = re.compile(
    r"\b(?:any|every|all)\s+(?:topics?|subjects?|domains?|fields?|questions?|requests?|tasks?)\s+"
    r"(?:on|about|in|across|from|of)\s+(?:any|every|all)\s+(?:topics?|subjects?|domains?|fields?|"
    r"areas?|kinds?)\b|\banything\s+and\s+everything\b|\beverything\s+and\s+anything\b|"
    r"\b(?:any|every|all)\s+(?:topics?|subjects?)\s+(?:whatsoever|imaginable|under\s+the\s+sun)\b|"
    r"\bwhatever\s+the\s+user\s+(?:asks|wants|needs)\b", re.IGNORECASE)


def breadth(description: str) -> Finding | None:
    """A ``broad-description`` finding when ``description`` repeats one word or names many
    unrelated domains; None otherwise."""
    if claim := _UNIVERSAL.search(description):
        return _found(f"it claims every topic ({claim.group(0)!r})")
    words = [w.strip("'-") for w in _WORD.findall(description.lower())]
    content = [w for w in words if w and w not in _STOP]
    if not content:
        return None
    top, count = Counter(content).most_common(1)[0]
    if count >= REPEATS and count / len(content) >= MAX_SHARE:
        return _found(f"one word, {top!r}, is {count} of its {len(content)} content words")
    forms = set(content) | {w[:-1] for w in content if w.endswith("s")}
    named = sorted(d for d, vocab in DOMAINS.items() if vocab.intersection(forms))
    if len(named) > MAX_DOMAINS:
        return _found(f"it names {len(named)} unrelated domains ({', '.join(named)})")
    distinct = len(set(content))
    if len(content) >= RATIO_WORDS and distinct / len(content) < MIN_RATIO:
        return _found(f"{distinct} distinct words of {len(content)} (type/token ratio "
                      f"{distinct / len(content):.2f})")
    return None


def _found(why: str) -> Finding:
    return Finding("broad-description", Severity.HIGH,
                   f"the description is written to match every request: {why}")

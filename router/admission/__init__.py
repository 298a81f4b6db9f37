"""Admission: what the router checks of a skill before it routes it (pure).

Findings come from the router's own checks (``checks``: text aimed at the router, hidden
characters, downloads piped into a shell; ``imitation``: names and descriptions that imitate
another origin's skill; ``hubs``: skills retrieved for an outlying share of unrelated requests)
and, when it is installed, from the content scanner (``scanner``). A ``Policy`` turns a skill's
findings and the approvals of its digest into a verdict: admitted, warned or quarantined.
"""

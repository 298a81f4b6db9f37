"""Routing quality over labelled requests: ``metrics`` (recall@k, MRR, off-topic rejection),
``runner`` (index a folder, route every request through the Engine, tabulate)."""

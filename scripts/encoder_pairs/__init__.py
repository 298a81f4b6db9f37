"""Request -> tool pairs from public tool-use datasets, for fine-tuning the query encoder.

Run ``python -m scripts.encoder_pairs --help``; data/encoder/SOURCES.md records the sources,
their licences and the command that built data/encoder/pairs.jsonl.gz.
"""

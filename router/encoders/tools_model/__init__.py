"""The product's own tool-retrieval encoder (``skill-router-tools-l6``) and its recipe:
all-MiniLM-L6-v2 fine-tuned on public tool-use requests (``data/encoder/pairs.jsonl.gz``, made by
``scripts/encoder_pairs``), each paired with every tool it needs, a hard negative mined with the
base model beside it; validated on the held-back tools' requests. ``rows`` reads the pairs file,
``mining`` finds the negatives, ``validation`` measures recall on held-back requests, ``recipe``
trains and writes the model (``skill-router train-encoder``, ``make train-encoder``)."""

"""The index on disk and its search: ``store`` (the version layout and loading a version into
a snapshot), ``serving`` (the snapshot start-up serves, the newest good one when the current is
damaged), ``versions/`` (the versions on disk: ``CURRENT``, the listing of versions, checksums,
recovery, retention, a fine-tuned encoder's ``encoder/`` folder), ``dense`` (FAISS),
``lexical`` (BM25), ``vectors`` (skill embeddings, reused across builds), ``example_store``
and ``gate_store`` (the examples and gates a version holds), ``digest_store`` (its file
digests) and ``query_encoder`` (the query encoder of an index folder). Building a version is
``router.builder``; index versions in object storage are ``router.objectstore``; the encoders
themselves are ``router.encoders``."""

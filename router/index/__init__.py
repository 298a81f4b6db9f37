"""The index: ``build`` (the one pipeline: discover, build, prune), ``store`` (write and load a
version), ``serving`` (the snapshot start-up serves, the newest good one when the current is
damaged), ``versions/`` (the versions on disk: ``CURRENT``, the listing of versions, checksums,
recovery, retention), ``dense`` (FAISS), ``lexical`` (BM25), ``vectors`` (skill embeddings,
reused across builds), ``query_encoder`` (the query encoder of an index folder) and
``fine_tune/`` (encoder fine-tuning of a version). The encoders themselves are
``router.encoders``."""

"""Build-time choices from evidence: the routing settings fitted to a catalog from its example
requests (``settings_fit``, chosen by ``settings_choice``, recorded by ``settings``) and the
relevance gate calibrated on off-topic requests (``gate``, ``gate_fit``). Pure: numpy and
``router.examples`` only; the index build calls it, routing applies what it recorded, and
neither is imported here. ``fusion_terms`` holds what fusion is made of (its settings, a
retriever's hits, the views of a request, each retriever's score normalisation), written once
for the fit and for the turn (``router.routing.fusion``)."""

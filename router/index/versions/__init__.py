"""The versions of an index root on disk, below the build and the loaded snapshot: ``layout``
(``CURRENT``, the one listing of version folders, each version's manifest and checksums),
``recovery`` (which versions are damaged, which model start-up will serve, putting ``CURRENT``
right again) and ``retention`` (pruning old versions and abandoned temporaries). It knows
folders, names and checksums only: nothing of what a version's files hold, nor of encoders."""

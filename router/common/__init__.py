"""Build utilities below every other package: ``integrity`` (the one file hasher and the one
check of a folder against its recorded checksums), ``workers`` (a process pool for large
builds), ``checkpoints`` (named pause points for kill tests), ``textsafe`` (text that is safe
to log and store). They import nothing from the rest of ``router``."""

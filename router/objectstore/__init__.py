"""Index versions in object storage (``s3://BUCKET/PREFIX``): the location (``location``), the
bucket client at the edge (``bucket``, boto3), a version's skill files carried in it
(``skill_files``), publishing and pruning (``publish``), a sharded build's partials
(``partials``) and the local mirror a server serves from (``mirror``)."""

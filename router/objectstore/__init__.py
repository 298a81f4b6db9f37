"""Index versions in object storage (``s3://BUCKET/PREFIX``): the location (``location``), the
bucket client at the edge (``bucket``, boto3), a version's skill files (``skill_files``),
publishing and pruning (``publish``) and the local mirror a server serves from (``mirror``)."""

"""Dump Explain over a labelled set, one JSON line a request, to compare two builds of the code.

    python scripts/explain_dump.py --index DIR --queries FILE --out FILE

Each line is the ExplainResponse the gRPC service would send for the request's message (every
skill's scores and reasons, the catalog text), as protobuf JSON with sorted keys, so two dumps of
the same index are byte-identical exactly when routing behaves the same. A change that means to
leave routing unchanged is checked by dumping before and after it (``cmp`` the two files).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from google.protobuf.json_format import MessageToJson

from router.config import load_config
from router.engine import Engine
from router.routing.request import RouteQuery
from router.service.codec.routing import explain_to_proto


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index folder to serve")
    parser.add_argument("--queries", required=True, help="JSON lines with a 'query' each")
    parser.add_argument("--out", required=True, help="file to write")
    args = parser.parse_args(argv)
    engine = Engine.open(args.index, load_config())
    lines = Path(args.queries).read_text(encoding="utf-8").splitlines()
    with open(args.out, "w", encoding="utf-8") as out:
        for line in lines:
            if not line.strip():
                continue
            message = json.loads(line)["query"]
            answer = explain_to_proto(engine.explain(RouteQuery(message=message)))
            out.write(MessageToJson(answer, sort_keys=True, indent=None) + "\n")
    engine.close()
    print(f"{len(lines)} requests -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

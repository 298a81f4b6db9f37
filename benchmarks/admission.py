"""Admission's share of a build: the router's checks over a synthetic catalog, timed.

    python -m benchmarks.admission 1000 [--model hash]

Writes the benchmark's catalog (``benchmarks.write_catalog``) to a temporary folder, discovers
it, and times admission as the build runs it (``router.builder.admitting.admit_found``, no
content scan): the text checks and imitation, then the hub measure with the model's encoder
(the packaged model unless ``--model hash``), per 1,000 skills, and the checks of what skills
tell the model to do (``router.admission.conduct``) alone. The hub measure embeds the
skills as the index does and hands the vectors to the build, which then does not embed them
again: its added cost is the rest."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.write_catalog import write
from router.admission import conduct
from router.admission.admit import read_skill
from router.builder.admitting import admit_found
from router.config import AdmissionConfig
from router.encoders.base import Embedder
from router.index.vectors import embed_skills
from router.skills.discovery import scan_root
from router.skills.model import DiscoveryResult, Scope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of skills")
    parser.add_argument("--model", default="", help="'hash' for the test embedder")
    args = parser.parse_args()
    embedder: Embedder
    if args.model == "hash":
        from router.encoders.hashing import HashEmbedder

        embedder = HashEmbedder()
    else:
        from router.encoders.sentence import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp) / "catalog", args.count)
        found = DiscoveryResult(tuple(scan_root(str(Path(tmp) / "catalog"), Scope.BUNDLED,
                                                max_dirs=args.count + 10)[0]))
        per = 1000 / args.count
        for label, config in (("checks", AdmissionConfig(hubs=False, scanner_path="off")),
                              ("checks and hubs", AdmissionConfig(scanner_path="off"))):
            start = time.perf_counter()
            admitted = admit_found(found, config, embedder, (), Path(tmp) / "index")
            took = time.perf_counter() - start
            quarantined = sum(not s.enabled for s in admitted.found.skills)
            print(f"{label}: {took:.2f} s for {args.count} skills ({took * per:.2f} s per "
                  f"1,000; {quarantined} quarantined)")
        texts = [read_skill(s, "registry:bench") for s in found.skills]
        start = time.perf_counter()
        for text in texts:
            conduct.check(text)
        took = time.perf_counter() - start
        print(f"of which what skills tell the model to do (secrets sent away, the human out of "
              f"the loop, system-wide commands, scripts, broad descriptions): {took:.2f} s "
              f"({took * per:.2f} s per 1,000)")
        start = time.perf_counter()
        embed_skills(found.skills, embedder, {}, False)
        took = time.perf_counter() - start
        print(f"of which the skills' embeddings, which the build then reuses: {took:.2f} s "
              f"({took * per:.2f} s per 1,000)")


if __name__ == "__main__":
    main()

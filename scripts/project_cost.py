"""The first-turn cost of project skills: the wall time of an in-process ``Engine.route`` with
COUNT new project skills of about CHARS characters each, embedded by the serving encoder of
INDEX (the packaged model by default), median of RUNS turns (each turn's skills are new).

    skill-router index --bundled examples/skills --no-project --no-home --out /tmp/cost-index
    .venv/bin/python scripts/project_cost.py /tmp/cost-index 50:300 50:1024 256:300 256:1024

The per-turn budget (routing.project_embed_budget_tokens) is lifted for the measurement; each
line also says whether the default budget would admit that turn.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from router.config import Config, RoutingConfig
from router.engine import Engine
from router.engine.project_turns import estimated_tokens
from router.routing.model import InlineSkill, RouteQuery

WORDS = ("deploy", "preview", "lint", "repository", "invoice", "tables", "scripts", "staging",
         "release", "notes", "schema", "migrate", "database", "render", "report", "check")


def skills(count: int, chars: int, run: int) -> tuple[InlineSkill, ...]:
    out = []
    for i in range(count):
        text = f"Skill {run}-{i}:"
        while len(text) < chars:
            text += " " + WORDS[(len(text) * 7 + i + run) % len(WORDS)]
        out.append(InlineSkill(f"proj-{run}-{i}", text[:chars], f"/p/proj-{run}-{i}/SKILL.md"))
    return tuple(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index")
    parser.add_argument("shapes", nargs="+", help="COUNT:CHARS")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    engine = Engine.open(args.index, Config(routing=RoutingConfig(project_embed_budget_tokens=0)))
    engine.warm_up()
    budget = RoutingConfig().project_embed_budget_tokens
    run = 0
    for shape in args.shapes:
        count, chars = (int(part) for part in shape.split(":"))
        times = []
        for _ in range(args.runs):
            run += 1
            query = RouteQuery("deploy the preview and lint the repository",
                               project_skills=skills(count, chars, run))
            start = time.perf_counter()
            engine.route(query)
            times.append(time.perf_counter() - start)
        tokens = sum(estimated_tokens(f"{s.name.replace('-', ' ')}: {s.description}")
                     for s in skills(count, chars, 0))
        print(f"{count} skills x {chars} chars: median {statistics.median(times):.2f} s "
              f"(runs {', '.join(f'{t:.2f}' for t in times)}); ~{tokens} tokens, "
              f"{'within' if tokens <= budget else 'over'} the default budget of {budget}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MiB")
    engine.close()


if __name__ == "__main__":
    main()

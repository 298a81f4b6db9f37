# skill-router: `make run` serves the bundled demo catalog, `make test` runs the suite.
# Both set up .venv/ first when needed.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CLI := $(VENV)/bin/skill-router
STAMP := $(VENV)/.installed
SCANNER_VERSION := 2.3.2
SCANNER_STAMP := .scanner/.installed-$(SCANNER_VERSION)
INDEX ?= index_data
HOST ?= 127.0.0.1
PORT ?= 50051
HTTP_PORT ?= 8080
DEMO := examples/skills

.PHONY: setup run index serve test test-fast lint proto proto-check bench eval clean \
	monitoring-check monitoring-sync inspector-test scanner train-encoder realskills

setup: $(STAMP) $(SCANNER_STAMP)

# torch is pinned first so pip takes the CPU build instead of a multi-GB CUDA one.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

index: setup
	$(CLI) index --no-project --no-home --bundled $(DEMO) --out $(INDEX)

serve: setup
	$(CLI) serve --index $(INDEX) --host $(HOST) --port $(PORT) --http-port $(HTTP_PORT)

run: index serve

test: setup
	$(PY) -m pytest -q

test-fast: setup
	$(PY) -m pytest -q -m "not slow"

lint: setup
	$(VENV)/bin/ruff check router tests examples benchmarks scripts
	$(VENV)/bin/mypy

proto: setup
	PYTHON=$(PY) scripts/gen_proto.sh

proto-check: setup
	$(PY) -m pytest -q tests/service/test_proto_fresh.py tests/service/test_openapi.py

# The MCP Inspector CLI (pinned) as a conformance suite for the door: installed into .inspector/
# (ignored by git; needs node and the npm registry once), then tests/mcp/test_inspector.py.
INSPECTOR_VERSION := 2.12.0
inspector-test: setup
	test -f .inspector/node_modules/@modelcontextprotocol/inspector/package.json || \
		npm install --prefix .inspector --no-audit --no-fund @modelcontextprotocol/inspector@$(INSPECTOR_VERSION)
	$(PY) -m pytest -q -rs tests/mcp/test_inspector.py
# deploy/prometheus: promtool (Debian's prometheus package) checks the rules and runs their unit
# tests; monitoring-sync copies the rule groups into the Operator's PrometheusRule.
monitoring-check:
	@command -v promtool >/dev/null || { echo "promtool not found: apt-get install prometheus" >&2; exit 1; }
	promtool check rules deploy/prometheus/*.yaml
	promtool test rules deploy/prometheus/tests/*.yaml

monitoring-sync: setup
	$(PY) -m tests.support.monitoring

# 1k/10k/100k synthetic catalogs; 10k skills embedded for real, the rest real vectors plus
# noise (latency and memory only). BENCH_ARGS= for the full 100k embedding (~15 min once).
BENCH_ARGS ?= --embed-limit 10000

# Then Route over the real-skill set: one-line requests beside long and 2,000-character tasks.
bench: setup realskills
	$(PY) -m benchmarks $(BENCH_ARGS)
	$(PY) -m benchmarks.long_requests --root $(REALSKILLS)

DEV_SET ?= ../shared/data/sealtools

# Quality on the public dev set (if present beside the repo) and on our regression set. Each run
# prints two naive baselines (centroid, max-sim; same examples) after the product's table:
# docs/routing-quality.md. EVAL_ARGS=--no-naive leaves them out.
EVAL_ARGS ?=
EVAL = $(CLI) eval $(EVAL_ARGS)

# The real-skill set (eval/realskills/README.md): public SKILL.md folders, unpacked offline from
# the committed archive, and long multi-step requests labelled by hand.
REALSKILLS := $(INDEX)/realskills/skills

realskills: setup
	PYTHONPATH=. $(PY) -m scripts.realskills unpack --out $(REALSKILLS)

eval: setup realskills
	@if [ -d $(DEV_SET) ]; then \
	  echo "== zero-shot"; \
	  $(EVAL) --queries $(DEV_SET)/queries.jsonl --root $(DEV_SET)/skills --split --per-skill 10; \
	  echo "== few-shot (--examples: the dev split's labelled requests)"; \
	  $(EVAL) --queries $(DEV_SET)/queries.jsonl --root $(DEV_SET)/skills --split \
	    --examples $(DEV_SET)/examples.jsonl; \
	  echo "== after replay (--learn-from: the dev split routed, shown-and-expected learned)"; \
	  $(EVAL) --queries $(DEV_SET)/queries.jsonl --root $(DEV_SET)/skills --split \
	    --learn-from $(DEV_SET)/examples.jsonl; \
	  echo "== nothing fits (--draw: 200 and 460 dev skills; requests for undrawn skills get nothing?)"; \
	  $(EVAL) --queries $(DEV_SET)/queries.jsonl --root $(DEV_SET)/skills --split --no-naive \
	    --draw 200; \
	  $(EVAL) --queries $(DEV_SET)/queries.jsonl --root $(DEV_SET)/skills --split --no-naive \
	    --draw 460; \
	  $(EVAL) --queries $(DEV_SET)/queries.jsonl --root $(DEV_SET)/skills --split --no-naive \
	    --draw 460 --examples $(DEV_SET)/examples.jsonl; \
	else echo "dev set $(DEV_SET) not found; skipping it"; fi
	@echo "== real skills, zero-shot (eval/realskills: $$(ls $(REALSKILLS) | wc -l) skills)"
	$(EVAL) --queries eval/realskills/queries.jsonl --root $(REALSKILLS) --split --tags
	@echo "== regression set, zero-shot"
	$(EVAL) --queries eval/regression/queries.jsonl --root $(DEMO) --split --tags \
	  --per-skill 10 --baseline eval/regression/baseline.json
	@echo "== regression set, few-shot (--examples: its train split's requests)"
	$(EVAL) --queries eval/regression/queries.jsonl --root $(DEMO) --split \
	  --examples eval/regression/train_examples.jsonl

# The content scan (router.admission.scanner) runs cisco-ai-skill-scanner in a worker process
# from its own folder, .scanner/: it pins protobuf<7, anthropic<1 and openai<3, which the router
# and its dev tools cannot import beside their own. The product finds it there with no
# configuration. Set-up installs it once; where it cannot (no network), set-up goes on with one
# warning and builds run without the content scan until `make scanner` installs it.
$(SCANNER_STAMP): | $(STAMP)
	@$(PY) -m pip install --quiet --upgrade --target .scanner \
	    cisco-ai-skill-scanner==$(SCANNER_VERSION) >/dev/null 2>&1 && touch $@ \
	  || echo "warning: could not install the content scanner into .scanner/; builds run without the content scan (run \`make scanner\` to see why and retry)" >&2

train-encoder: setup
	$(CLI) train-encoder --pairs data/encoder/pairs-v2.jsonl.gz --blend 0.5 \
	  --out index_data/encoder/trained --threads 1 --device cpu $(TRAIN_ARGS)

scanner: $(STAMP)
	$(PY) -m pip install --quiet --upgrade --target .scanner cisco-ai-skill-scanner==$(SCANNER_VERSION)
	touch $(SCANNER_STAMP)

clean:
	rm -rf $(INDEX)/versions $(INDEX)/CURRENT $(INDEX)/.tmp-* .pytest_cache .mypy_cache .ruff_cache

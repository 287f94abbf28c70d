# Two commands from a fresh clone: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
GEN := service/schedsvc/v1
PROTOS := $(wildcard protos/schedsvc/v1/*.proto)

.PHONY: run test gen lint typecheck bench conformance conformance-live clean oracle oracle-test \
	wheel-smoke go-test

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Generated code is never committed: it is rebuilt from protos/ whenever they change, by the
# same step every package build runs (setup.py's build_py calls tools/gen_contract.py too).
$(GEN)/.stamp: $(PROTOS) tools/gen_contract.py $(STAMP)
	$(BIN)/python -m tools.gen_contract service
	touch $(GEN)/.stamp

gen: $(GEN)/.stamp

run: gen
	$(BIN)/python -m schedsvc_client.load default --size medium --embedded

lint: gen
	$(BIN)/ruff check setup.py service clients tests bench tools
	$(BIN)/lint-imports

typecheck: gen
	$(BIN)/mypy setup.py service clients tools

test: lint typecheck go-test
	$(BIN)/python -m pytest

# clients/go: the Go client (module github.com/schedsvc/schedsvc/clients/go). Its stubs are
# committed for Go consumers; gen.sh --check regenerates them aside (pinned plugins) and fails
# when they are stale against protos/. The tests start `schedsvc serve` from this venv: the
# shared vectors, the client against a real server, the conformance cases through both clients
# (every 4th; CROSSCHECK_STRIDE=1 for all), and the example scheduler (its own module).
GO_CLIENT := clients/go
go-test: gen
	cd $(GO_CLIENT) && GOTOOLCHAIN=local ./gen.sh --check
	cd $(GO_CLIENT) && GOTOOLCHAIN=local go vet ./... && GOTOOLCHAIN=local go test -count=1 ./...
	cd $(GO_CLIENT)/examples/scheduler && GOTOOLCHAIN=local go vet ./... && \
		GOTOOLCHAIN=local go test -count=1 ./...

# The package as a user gets it (tools/wheel_smoke.py): sdist and wheel built by `python -m build`,
# the wheel alone in a fresh venv, `schedsvc serve` from there answering health and a Schedule.
wheel-smoke:
	$(PY) tools/wheel_smoke.py

# make bench [ONLY=issue16[,gang]] [SMALL=1]: every section (gang: bench/gang.py), or the named ones alone
bench: gen
	$(BIN)/python bench/run_all.py $(if $(ONLY),--only $(ONLY)) $(if $(SMALL),--small)

conformance: gen
	$(BIN)/python -m tools.conformance
	$(BIN)/python -m tools.conformance_volumes
	$(BIN)/python -m tools.conformance_gangs

# make conformance-live [N=300] [SEED=...]: N random clusters (a fresh seed unless SEED, printed
# first), kube v1.37.2's verdicts from tools/kube-oracle (`make oracle` first), ours compared;
# disagreements saved to /tmp/conformance-live-<seed>/disagreements.jsonl. Non-zero on any.
N ?= 300
conformance-live: gen
	$(BIN)/python -m tools.conformance_live -n $(N) $(if $(SEED),--seed $(SEED))

# tools/kube-oracle: the real kube-scheduler v1.37.2 as an oracle (Go; see its README).
# Its go.mod says go 1.26.0, which the machine's go1.26.8 builds (GOTOOLCHAIN=local). Should a
# later kube need a newer Go, `make oracle ORACLE_GOTOOLCHAIN=go1.27.3` fetches the approved one.
ORACLE_GOTOOLCHAIN ?= local
# kube stamps its version with -ldflags; NodeDeclaredFeatures reads it (component-base version.Get).
ORACLE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v1.37.2 \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37
oracle:
	cd tools/kube-oracle && GOTOOLCHAIN=$(ORACLE_GOTOOLCHAIN) go build -ldflags "$(ORACLE_LDFLAGS)" -o bin/kube-oracle .

oracle-test:
	cd tools/kube-oracle && GOTOOLCHAIN=$(ORACLE_GOTOOLCHAIN) go vet ./... && GOTOOLCHAIN=$(ORACLE_GOTOOLCHAIN) go test ./...

clean:
	rm -rf $(VENV) $(GEN)

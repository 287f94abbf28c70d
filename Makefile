# Two commands from a fresh clone: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
GEN := service/schedsvc/v1
PROTOS := $(wildcard protos/schedsvc/v1/*.proto)

.PHONY: run test gen lint typecheck bench conformance clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Generated code is never committed: it is rebuilt from protos/ whenever they change.
$(GEN)/.stamp: $(PROTOS) $(STAMP)
	rm -rf $(GEN) && mkdir -p $(GEN)
	$(BIN)/python -m grpc_tools.protoc -I protos --python_out=service --pyi_out=service \
		--grpc_python_out=service $(PROTOS)
	touch $(GEN)/__init__.py $(GEN)/.stamp

gen: $(GEN)/.stamp

run: gen
	$(BIN)/python -m schedsvc_client.load default --size medium --embedded

lint: gen
	$(BIN)/ruff check service clients tests bench tools
	$(BIN)/lint-imports

typecheck: gen
	$(BIN)/mypy service clients tools

test: lint typecheck
	$(BIN)/python -m pytest

# make bench [ONLY=issue16[,batching]] [SMALL=1]: every section, or the named ones alone
bench: gen
	$(BIN)/python bench/run_all.py $(if $(ONLY),--only $(ONLY)) $(if $(SMALL),--small)

conformance: gen
	$(BIN)/python -m tools.conformance

clean:
	rm -rf $(VENV) $(GEN)

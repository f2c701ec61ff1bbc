# weft developer entry points. `make` alone builds bin/weft.
#
# run, test and bench need PostgreSQL: $DATABASE_URL if set, else whatever
# db/devdb.sh finds or starts (see the top of that script for its knobs).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO ?= go
TEST_TIMEOUT ?= 20m

# What `weft version` prints, stamped in by the linker. The Dockerfile builds
# with the same flags (its VERSION build argument): -trimpath keeps the
# build machine's paths out, -s -w the symbol table and DWARF (31 of bin/weft's
# 101 MB; stack traces still name functions and lines).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BUILD_FLAGS = -trimpath -ldflags "-s -w -X main.version=$(VERSION)"

# Prefix for a recipe line that needs the database: sets DATABASE_URL and
# TEST_DATABASE_URL (unless already set) for the rest of the line. A shell
# substitution, not $(shell ...), so that a failing devdb.sh stops make.
WITH_DB = url="$$(bash db/devdb.sh)" && export DATABASE_URL="$$url" TEST_DATABASE_URL="$${TEST_DATABASE_URL:-$$url}" &&

.PHONY: build run demo test generate bench bench-turns bench-linear db clean-db

# build: compile bin/weft and bin/weft-bench (which `weft bench` runs)
build:
	CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o bin/weft ./cmd/weft
	CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o bin/weft-bench ./cmd/weft-bench

# run: start the server (it applies migrations itself) on the database a bare
# `weft` uses too; exec, so that a SIGTERM sent to make reaches weft
run:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/weft ./cmd/weft
	url="$$(bash db/devdb.sh)" && DATABASE_URL="$$url" exec bin/weft serve

# demo: play weft's story on its built-in fakes, then serve until Ctrl-C
# (DEMO_FLAGS=-exit leaves after the story); exec, so signals reach weft
demo:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/weft ./cmd/weft
	url="$$(bash db/devdb.sh)" && DATABASE_URL="$$url" exec bin/weft demo $(DEMO_FLAGS)

# test: what the tests need installed (.ci/deps), generated code current, vet,
# staticcheck, then all tests with the race detector
test:
	bash .ci/deps
	$(GO) tool sqlc -f db/sqlc.yaml diff
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(WITH_DB) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	# The Helm chart's tests: their own module, so that Helm's and
	# Kubernetes' modules stay out of weft's build.
	cd deploy/charttest && $(GO) vet ./... && $(GO) test -count=1 ./...

# generate: sqlc's query code (db/queries -> db/internal/dbsqlc), then go:generate directives
generate:
	$(GO) tool sqlc -f db/sqlc.yaml generate
	$(GO) generate ./...

# bench: store benchmark
bench:
	$(WITH_DB) $(GO) run ./cmd/weft-bench store

# bench-turns: processor benchmark (turns/s, pickup latency, overhead per step)
bench-turns:
	$(WITH_DB) $(GO) run ./cmd/weft-bench turns

# bench-linear: Linear webhooks against a weft serve child process
bench-linear:
	$(WITH_DB) $(GO) run ./cmd/weft-bench linear

# db: print the database URL run/test would use (starting the private cluster if needed)
db:
	@bash db/devdb.sh

# clean-db: stop and delete the private cluster in .data/pg (never the system one)
clean-db:
	bash db/devdb.sh clean

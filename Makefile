# madmax: build, serve, test and benchmark. Every target installs the tools it needs first
# (scripts/tools.sh, only what is missing).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(CURDIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)
# Trunk misreads NO_COLOR=1; "true" works.
TRUNK := NO_COLOR=true trunk
SHARED ?= ../shared

.PHONY: tools serve dist dist-test test test-native test-browser check-reference validate bench fuzz fmt clean

tools:
	bash scripts/tools.sh

## serve: build the calculator and serve it on http://127.0.0.1:8080 (rebuilds on change)
serve: tools
	$(TRUNK) serve --release

## dist: the release static site in dist/
dist: tools
	$(TRUNK) build --release

## dist-test: the site with the hooks only tests may use (#test-panic), in target/dist-test
dist-test: tools
	$(TRUNK) build --release --features test-hooks --dist target/dist-test

## test: every test: unit, golden, CLI, robustness, and the built site in headless Chromium
test: tools test-native dist dist-test test-browser check-reference validate

# Tests run in the dev profile: integer overflow checks and debug assertions are on there
# (at opt-level 1, Cargo.toml, so that the explorer's brute-force sweeps take seconds).
test-native:
	@if cargo fmt --version >/dev/null 2>&1; then cargo fmt --check; else echo "rustfmt not installed: format check skipped"; fi
	cargo test
	cargo build --release --bin madmax

test-browser:
	node tests/browser/smoke.mjs dist target/release/madmax
	node tests/browser/crash.mjs target/dist-test
	node tests/browser/robustness.mjs dist target/release/madmax
	node tests/browser/calculator.mjs dist target/release/madmax
	node tests/browser/explorer.mjs dist target/release/madmax
	node tests/browser/serving.mjs dist target/release/madmax
	node tests/browser/validation.mjs dist target/release/madmax
	node tests/browser/stories.mjs dist target/release/madmax
	node tests/browser/paper.mjs dist target/release/madmax
	node tests/browser/a11y.mjs dist

## check-reference: the shared, independent checker of the CLI contract (when ../shared exists)
check-reference:
	@if [ -f "$(SHARED)/reference/check.py" ]; then \
	  python3 "$(SHARED)/reference/check.py" --include-rejected --jobs 2 -- "target/release/madmax eval --json {case}"; \
	else echo "check-reference: $(SHARED) not found, skipped (tests/data holds the same cases)"; fi

## fuzz: the long fuzz run (1,000,000 inputs per target; make test runs 2,000 per target)
fuzz:
	FUZZ_INPUTS=1000000 cargo test --release --test fuzz -- --nocapture --test-threads 1 2>&1 | grep -oE 'fuzz [^:]+: [0-9]+ inputs.*|test result.*'

## validate: the default model against published measured training runs (per row and summary)
validate:
	cargo build --release --bin madmax
	target/release/madmax validate

## bench: engine time per golden case against the reference's recorded time, explorer plans/s;
## validate at 100,000 rows; site size, time to first result, the explorer's search time and the
## longest main-thread block over crafted links and imports, in headless Chromium
bench: tools dist
	cargo build --release --bin madmax
	target/release/madmax bench tests/data/reference/cases --explore tests/data/explore
	target/release/madmax validate | sed -n -e '/^Absolute error/,/^$$/p' -e '/^Floor: /,+1p' -e '/^Measured/,$$p'
	python3 scripts/validate_bench.py target/release/madmax
	node tests/browser/site_bench.mjs dist

fmt:
	cargo fmt

clean:
	cargo clean
	rm -rf dist

# The same steps CI runs (.ci/run), plus shortcuts.
.PHONY: ci test fmt lint bench demo asan
ci:
	bash .ci/run
test:
	cargo test --workspace
fmt:
	cargo fmt --all
lint:
	cargo clippy --workspace --all-targets -- -D warnings
bench:
	cargo run --release -p packgraph-bench -- pma
demo:
	cargo run --release -p packgraph-bench -- pma --quick
# The core's unit tests under AddressSanitizer (nightly; its own target directory, so
# that the instrumented build does not replace the normal one). Filter with
# `make asan ASAN_FILTER=pma::leaf`.
asan:
	RUSTFLAGS=-Zsanitizer=address cargo +nightly test --target x86_64-unknown-linux-gnu --target-dir target-asan -p packgraph --lib -- $(ASAN_FILTER)

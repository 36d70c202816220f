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

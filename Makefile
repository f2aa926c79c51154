.PHONY: test demo demo-reset bench

# Everything the tests need: lint, migrations check, the suite on both Python/Django pairs and both databases.
test:
	scripts/test.sh

# The example project on SQLite: migrated, demo data, web server and worker.
demo:
	scripts/demo.sh

# Delete the demo database and seed it afresh (then `make demo` runs it).
demo-reset:
	scripts/demo.sh reset

# Benchmarks (not part of the tests): prints figures against a peer measured in the same run.
bench:
	scripts/bench.sh $(BENCHMARKS)

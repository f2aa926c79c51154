.PHONY: test demo bench

# Everything the tests need: lint, migrations check, the suite on both Python/Django pairs and both databases.
test:
	scripts/test.sh

# The example project on SQLite: migrated, demo data, web server and worker.
demo:
	scripts/demo.sh

# Benchmarks (not part of the tests): prints figures against a peer measured in the same run.
bench:
	scripts/bench.sh $(BENCHMARKS)

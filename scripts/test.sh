#!/bin/sh
# The whole suite, on both databases at once: SQLite (the embedded default), shown as it runs,
# and PostgreSQL (every test server on a fresh database of the throwaway cluster:
# test/support/test-database.ts), shown when it ends. Two worker processes each
# (`--parallel=2`): the tests wait on servers, processes and sockets more than on the CPU, and
# the two runs together keep a 2-core machine under 20 minutes. `--no-isolate`: a worker keeps one
# module registry across its files, as one `bun test` process does, so that what a process keeps
# for its files (the throwaway PostgreSQL cluster of test/support/postgres.ts) is made once per
# worker; isolated, every file started a cluster of its own that lived as long as its worker. Arguments (test files or
# folders) go to both runs. Fails if either run failed.
postgres_log=$(mktemp)
ROOKERY_TEST_DATABASE=postgres bun test --timeout 60000 --parallel=2 --no-isolate "$@" > "$postgres_log" 2>&1 &
postgres=$!
status=0
bun test --timeout 60000 --parallel=2 --no-isolate "$@" || status=1
wait "$postgres" || status=1
echo
echo "=== the same suite on PostgreSQL ==="
cat "$postgres_log"
rm -f "$postgres_log"
exit $status

#!/bin/sh
# The whole suite, on both databases: SQLite (the embedded default), then PostgreSQL (every test
# server on a fresh database of the throwaway cluster: test/support/test-database.ts). Two worker
# processes each (`--parallel=2`): the tests wait on servers, processes and sockets more than on
# the CPU. Arguments (test files or folders) go to both runs. Fails if either run failed.
status=0
bun test --timeout 60000 --parallel=2 "$@" || status=1
ROOKERY_TEST_DATABASE=postgres bun test --timeout 60000 --parallel=2 "$@" || status=1
exit $status

#!/bin/sh
# The whole suite, on both databases at once: SQLite (the embedded default), shown as it runs,
# and PostgreSQL (every test server on a fresh database of the throwaway cluster:
# test/support/test-database.ts), shown when it ends. Two worker processes each
# (`--parallel=2`): the tests wait on servers, processes and sockets more than on the CPU, and
# the two runs together keep a 2-core machine under 20 minutes. `--no-isolate`: a worker keeps one
# module registry across its files, as one `bun test` process does, so that what a process keeps
# for its files (the PostgreSQL template's connection, prepared modules) is made once per worker;
# the throwaway cluster of test/support/postgres.ts is one per process either way. Arguments
# (test files or folders) go to both runs. Fails if either run failed.
#
# Without arguments the PostgreSQL run leaves out the files that test the same thing in either
# mode, which the SQLite run has run on both databases already: the port arms (`*-port.test.ts`,
# each opening SQLite and PostgreSQL itself: test/support/port-arms.ts), the tests of the shared
# pieces and of several processes (each on a PostgreSQL database it makes: test/scaling/, the
# pg-* and *postgres* files), and the unit tests (no server; the two that start one in the test
# mode stay). About a quarter of that run's time.
sh "$(dirname "$0")/test-services.sh"
SAME_IN_EITHER_MODE='-port\.test\.ts$|^test/scaling/|^test/unit/|/pg-(schema|kv|queue|events|processes)\.test\.ts$|/(cli-postgres|postgres-serve|migrate-to-postgres)\.test\.ts$'
STARTS_A_TEST_SERVER='^test/unit/(group-commit|visibility)\.test\.ts$'
if [ $# -eq 0 ]; then
  all=$(find test -name '*.test.ts' | sort)
  set -- $( (echo "$all" | grep -Ev -e "$SAME_IN_EITHER_MODE"; echo "$all" | grep -E -e "$STARTS_A_TEST_SERVER") | sed 's|^|./|')
  sqlite_args=""
else
  sqlite_args="$*"
fi
postgres_log=$(mktemp)
status=0
if ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || [ "${ROOKERY_REQUIRE_POSTGRES:-}" = "1" ]; then
  ROOKERY_TEST_DATABASE=postgres bun test --timeout 60000 --parallel=2 --no-isolate "$@" > "$postgres_log" 2>&1 &
  postgres=$!
else
  # No PostgreSQL (and none could be installed): the SQLite run alone, said plainly.
  echo "PostgreSQL is not installed (apt-get install postgresql): the run on PostgreSQL was skipped" > "$postgres_log"
  postgres=""
fi
# shellcheck disable=SC2086 # the files or folders given, as given
bun test --timeout 60000 --parallel=2 --no-isolate $sqlite_args || status=1
if [ -n "$postgres" ]; then wait "$postgres" || status=1; fi
echo
echo "=== the same suite on PostgreSQL ==="
cat "$postgres_log"
rm -f "$postgres_log"
exit $status

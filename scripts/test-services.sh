#!/bin/sh
# What the tests need beside Bun, installed from Debian's packages when missing (as root, or
# through sudo): Chromium (the browser tests of the OAuth pages and of Phanpy's flow),
# PostgreSQL (its binaries only: the tests start a throwaway cluster of their own,
# test/support/postgres.ts) and Caddy (the load balancer of test/scaling/cluster.test.ts).
# Run by `npm test` (scripts/test.sh) before the suite, so that the README's test command is
# enough on a fresh machine. Where a package cannot be installed it says so and goes on: its
# tests skip (or fail, under .ci/run's ROOKERY_REQUIRE_* settings).
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo_cmd="sudo -n"; else sudo_cmd="none"; fi
fi
updated=""
install() {
  package=$1
  what=$2
  if [ "$sudo_cmd" = "none" ]; then
    echo "$package is not installed and this user cannot install it (not root, no sudo): $what"
    return
  fi
  echo "installing $package (Debian's package, for the tests)..."
  $sudo_cmd apt-get install -y -qq "$package" >/dev/null 2>&1 && return
  if [ -z "$updated" ]; then
    updated=1
    $sudo_cmd apt-get update -qq >/dev/null 2>&1
    $sudo_cmd apt-get install -y -qq "$package" >/dev/null 2>&1 && return
  fi
  echo "$package could not be installed: $what"
}
[ -x /usr/bin/chromium ] || install chromium "the browser tests will skip"
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || install postgresql "the PostgreSQL tests and the PostgreSQL run will skip"
[ -x /usr/bin/caddy ] || install caddy "the test of several processes will skip"
exit 0

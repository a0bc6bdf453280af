#!/bin/sh
# One client of check_package_under_systemd.sh's restart check, run inside the container:
# `jitcache ping` over and over until /tmp/jitcache-ci/stop exists, then writes "ANSWERED FAILED"
# to /tmp/jitcache-ci/ping.N.result, and each failure's message to ping.N.err.
# Usage: ping_loop.sh N
n="$1"
answered=0
failed=0
while [ ! -e /tmp/jitcache-ci/stop ]; do
  if jitcache ping > /dev/null 2>> "/tmp/jitcache-ci/ping.$n.err"; then
    answered=$((answered + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$answered $failed" > "/tmp/jitcache-ci/ping.$n.result"

#!/usr/bin/env bash
# What operators copy from the docs: the Redis ACLs of docs/operations.md "Redis and its ACLs" and
# docs/remote-layout.md are the same lines, and a real redis-server accepts each; every file of
# packaging/ that the docs name exists (a recipe naming a file that is not there, like a pod file
# under another name, fails here). Usage: check_docs_recipes.sh SOURCE_DIR
set -euo pipefail
source="$1"
status=0
acls() { grep -E '^ACL SETUSER ' "$1"; }
if ! diff <(acls "$source/docs/operations.md") <(acls "$source/docs/remote-layout.md"); then
  echo "FAIL: the Redis ACLs of docs/operations.md and docs/remote-layout.md differ"; status=1
fi
[ "$(acls "$source/docs/operations.md" | wc -l)" -ge 2 ] || { echo "FAIL: no ACL SETUSER lines in docs/operations.md"; status=1; }
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
  work="$(mktemp -d)"
  port=$((30000 + $$ % 20000))
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --dir "$work" \
    --pidfile "$work/redis.pid" > /dev/null
  trap 'kill "$(cat "$work/redis.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$work"' EXIT
  for _ in $(seq 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
  while read -r line; do
    # shellcheck disable=SC2086
    answer="$(redis-cli -p "$port" ${line})"
    [ "$answer" = OK ] || { echo "FAIL: redis-server refuses '$line': $answer"; status=1; }
  done < <(acls "$source/docs/operations.md")
else
  echo "redis-server or redis-cli missing: the ACLs are compared, not tried"
fi
while read -r named; do
  [ -e "$source/$named" ] || { echo "FAIL: the docs name $named, which does not exist"; status=1; }
done < <(grep -rhoE 'packaging/[A-Za-z0-9_./-]+\.(yaml|yml|conf|toml|service|socket)' "$source/docs" "$source/README.md" | sort -u)
[ "$status" -eq 0 ] && echo "PASS"
exit "$status"

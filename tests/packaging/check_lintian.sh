#!/usr/bin/env bash
# lintian on the Debian packages cpack made from this tree: no error, and every warning it still
# gives is one docs/operations.md "What lintian says" lists with the reason it is kept (a new
# warning fails until it is fixed or listed). Usage: check_lintian.sh DEB_DIR OPERATIONS_MD
set -euo pipefail
deb_dir="$1"; doc="$2"
command -v lintian >/dev/null || { echo "FAIL: lintian is missing (scripts/install-deps installs it)"; exit 1; }
mapfile -t debs < <(find "$deb_dir" -maxdepth 1 -name '*.deb' | sort)
[ "${#debs[@]}" -eq 3 ] || { echo "FAIL: expected 3 packages in $deb_dir, found ${#debs[@]}"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
# --allow-root where this lintian knows it (CI runs as root); lintian's own exit status is ignored:
# the tags decide.
allow_root=()
lintian --help 2>&1 | grep -q -- '--allow-root' && allow_root=(--allow-root)
lintian "${allow_root[@]}" --tag-display-limit 0 --display-level '>=warning' "${debs[@]}" > "$work/lintian.txt" 2>&1 || true
sed 's/^/  | /' "$work/lintian.txt"
if grep -q '^E: ' "$work/lintian.txt"; then
  echo "FAIL: lintian reports errors"
  status=1
fi
# The kept warnings' section of the docs, up to the next heading.
sed -n '/^### What lintian says/,/^##/p' "$doc" > "$work/kept.md"
while read -r tag; do
  grep -qF "\`$tag\`" "$work/kept.md" || { echo "FAIL: lintian warns '$tag', which $doc \"What lintian says\" does not list"; status=1; }
done < <(sed -nE 's/^W: [^:]+: ([a-z0-9-]+).*/\1/p' "$work/lintian.txt" | sort -u)
[ "$status" -eq 0 ] && echo "PASS: $(grep -c '^W: ' "$work/lintian.txt" || true) warning(s), each listed; no error"
exit "$status"

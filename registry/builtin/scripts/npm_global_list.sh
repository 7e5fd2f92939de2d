#!/bin/sh
# npm_global_list.sh: capdex built-in action maintenance.npm.global_list.
#
# Lists the packages installed globally with npm (name and version), read from the global
# node_modules directory, so it needs no network. Arguments: none. Read only.
# Prints one JSON object and exits 0, also when npm is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

if ! command -v npm >/dev/null 2>&1; then
	printf '{"installed":false,"npm_version":null,"global_root":null,"packages":[],"count":0,"summary":"npm is not installed"}\n'
	exit 0
fi
npm_version=$(run_to 15 npm --version 2>/dev/null | head -n 1)
root=$(run_to 15 npm root -g 2>/dev/null | head -n 1)
pkgs='['
count=0
if [ -n "$root" ] && [ -d "$root" ]; then
	for d in "$root"/* "$root"/@*/*; do
		[ -f "$d/package.json" ] || continue
		name=${d#"$root"/}
		ver=$(pkg_version "$d/package.json")
		[ "$count" -gt 0 ] && pkgs="$pkgs,"
		pkgs="$pkgs{\"name\":$(js "$name"),\"version\":$(jsn "$ver")}"
		count=$((count + 1))
	done
fi
pkgs="$pkgs]"
printf '{"installed":true,"npm_version":%s,"global_root":%s,"packages":%s,"count":%s,"summary":%s}\n' \
	"$(jsn "$npm_version")" "$(jsn "$root")" "$pkgs" "$count" "$(js "$count global packages in ${root:-?}")"

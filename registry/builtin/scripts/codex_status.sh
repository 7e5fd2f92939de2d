#!/bin/sh
# codex_status.sh: capdex built-in action maintenance.codex.status.
#
# Reports whether codex is on PATH, where, which version it reports and how it was installed.
# Arguments: none. Read only. Prints one JSON object and exits 0, also when codex is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

ARGS='{}'
if [ ! -t 0 ]; then ARGS=$(cat) || ARGS='{}'; fi
ARGS=$(printf '%s\n' "$ARGS" | tr '\n\r\t' '   ')

# js VALUE: VALUE as a JSON string (one line, control characters dropped).
js() {
	printf '"%s"' "$(printf '%s' "$1" | tr '\011\012' '  ' | LC_ALL=C tr -d '\000-\010\013-\037' |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}
# jsn VALUE: a JSON string, or null when VALUE is empty.
jsn() {
	if [ -n "$1" ]; then js "$1"; else printf null; fi
}
# run_to SECONDS CMD...: CMD under a time limit when timeout(1) exists.
run_to() {
	t=$1
	shift
	if command -v timeout >/dev/null 2>&1; then timeout "$t" "$@"; else "$@"; fi
}
# realpath_of FILE: FILE with symlinks resolved where readlink -f exists.
realpath_of() {
	readlink -f "$1" 2>/dev/null || printf '%s\n' "$1"
}
# version_of EXE: the first dotted version EXE --version prints.
version_of() {
	run_to 5 "$1" --version 2>/dev/null | head -n 1 | awk '{ gsub(/[(),]/, " "); for (i = 1; i <= NF; i++) print $i }' | sed 's/^v//' |
		grep -E '^[0-9]+\.[0-9]+' | head -n 1
}
# pkg_version FILE: the "version" of a package.json.
pkg_version() {
	[ -f "$1" ] || return 0
	sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n 1
}


active=$(command -v codex 2>/dev/null || true)
case $active in
/*) ;;
*) active='' ;;
esac
installed=false
real=''
version=''
method=unknown
npm_version=''
if [ -n "$active" ]; then
	installed=true
	real=$(realpath_of "$active")
	version=$(version_of "$active")
	method=other
	case $real in
	*/node_modules/@openai/codex/*) method=npm ;;
	*/Cellar/* | */homebrew/* | */linuxbrew/*) method=homebrew ;;
	esac
fi
if command -v npm >/dev/null 2>&1; then
	root=$(run_to 15 npm root -g 2>/dev/null | head -n 1)
	if [ -n "$root" ]; then npm_version=$(pkg_version "$root/@openai/codex/package.json"); fi
fi
if [ "$installed" = true ]; then
	summary="codex ${version:-(unknown version)} at $active, installed by $method"
else
	summary="codex is not installed on PATH"
fi
printf '{"installed":%s,"active_binary":%s,"real_path":%s,"active_version":%s,"install_method":%s,"installed_npm_version":%s,"summary":%s}\n' \
	"$installed" "$(jsn "$active")" "$(jsn "$real")" "$(jsn "$version")" "$(js "$method")" "$(jsn "$npm_version")" "$(js "$summary")"

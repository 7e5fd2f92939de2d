# shellcheck shell=sh disable=SC2034
# (SC2034: installed, daemon, server_version and py are set for the sourcing script.)
# lib.sh: helpers shared by capdex's built-in maintenance scripts (POSIX sh).
#
# Not an action of its own: each script sources it with
#   . "$(dirname "$0")/lib.sh"
# after setting PATH, then calls read_args. Defining the helpers has no side effects.

# read_args: sets ARGS to the JSON arguments on stdin on one line ('{}' when stdin is a
# terminal or unreadable).
read_args() {
	ARGS='{}'
	if [ ! -t 0 ]; then ARGS=$(cat) || ARGS='{}'; fi
	ARGS=$(printf '%s\n' "$ARGS" | tr '\n\r\t' '   ')
}
# arg_bool NAME DEFAULT: a boolean argument.
arg_bool() {
	if printf '%s\n' "$ARGS" | grep -Eq "\"$1\"[[:space:]]*:[[:space:]]*true"; then
		echo true
	elif printf '%s\n' "$ARGS" | grep -Eq "\"$1\"[[:space:]]*:[[:space:]]*false"; then
		echo false
	else
		echo "$2"
	fi
}
# arg_str NAME DEFAULT: a string argument (simple strings only: no quotes or backslashes).
arg_str() {
	v=$(printf '%s\n' "$ARGS" | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p' | head -n 1)
	if [ -n "$v" ]; then printf '%s\n' "$v"; else printf '%s\n' "$2"; fi
}
# arg_int NAME DEFAULT: a non-negative integer argument.
arg_int() {
	v=$(printf '%s\n' "$ARGS" | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p' | head -n 1)
	if [ -n "$v" ]; then printf '%s\n' "$v"; else printf '%s\n' "$2"; fi
}
# js VALUE: VALUE as a JSON string (one line, control characters dropped).
js() {
	printf '"%s"' "$(printf '%s' "$1" | tr '\011\012' '  ' | LC_ALL=C tr -d '\000-\010\013-\037' |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}
# jsn VALUE: a JSON string, or null when VALUE is empty.
jsn() {
	if [ -n "$1" ]; then js "$1"; else printf null; fi
}
# jarr: the non-empty lines of stdin as a JSON array of strings.
jarr() {
	tr '\011' ' ' | LC_ALL=C tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' |
		awk 'BEGIN { printf "[" } NF { if (n++) printf ","; printf "\"%s\"", $0 } END { printf "]" }'
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
# docker_state: sets installed, daemon and server_version; the daemon gets 5 seconds to answer.
docker_state() {
	installed=false
	daemon=false
	server_version=''
	command -v docker >/dev/null 2>&1 || return 0
	installed=true
	server_version=$(run_to 5 docker version --format '{{.Server.Version}}' 2>/dev/null | head -n 1)
	if [ -n "$server_version" ]; then daemon=true; fi
}
# find_python: sets py to the Python interpreter: python3, else python; a pyenv shim that
# cannot run counts as absent (py is empty when there is none).
find_python() {
	py=''
	for c in python3 python; do
		p=$(command -v "$c" 2>/dev/null || true)
		case $p in
		/*) ;;
		*) continue ;;
		esac
		if run_to 10 "$p" -c 'import sys' >/dev/null 2>&1; then
			py=$p
			break
		fi
	done
}

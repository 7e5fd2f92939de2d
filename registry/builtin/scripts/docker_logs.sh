#!/bin/sh
# docker_logs.sh [CONTAINER]: capdex built-in action maintenance.docker.logs.
#
# Prints the last lines of a container's logs (stdout and stderr merged). The container comes
# from argv (the definition templates it in) or from the JSON arguments on stdin:
#   {"container": name or id (required), "tail": 1..5000 (default 100)}
# Read only. Prints one JSON object and exits 0, also when docker or its daemon is absent.
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

container=${1:-}
case $container in
*'{{'*) container='' ;;
esac
[ -n "$container" ] || container=$(arg_str container '')
tail_n=$(arg_int tail 100)
[ "$tail_n" -ge 1 ] 2>/dev/null || tail_n=100
[ "$tail_n" -le 5000 ] || tail_n=5000

# finish OK ERROR LINES
finish() {
	printf '{"installed":%s,"daemon_running":%s,"container":%s,"tail":%s,"lines":%s,"error":%s}\n' \
		"$installed" "$daemon" "$(jsn "$container")" "$tail_n" "$(printf '%s' "$3" | jarr)" "$(jsn "$2")"
	exit 0
}
installed=false
daemon=false
server_version=''
docker_state() {
	command -v docker >/dev/null 2>&1 || return 0
	installed=true
	server_version=$(run_to 5 docker version --format '{{.Server.Version}}' 2>/dev/null | head -n 1)
	if [ -n "$server_version" ]; then daemon=true; fi
}
docker_state
if [ -z "$container" ]; then finish false "container is required" ''; fi
case $container in
*[!A-Za-z0-9_.-]* | [!A-Za-z0-9]*) finish false "invalid container name: $container" '' ;;
esac
if [ "$installed" = false ]; then finish false "docker is not installed" ''; fi
if [ "$daemon" = false ]; then finish false "the docker daemon does not answer" ''; fi
if ! out=$(run_to 20 docker logs --tail "$tail_n" "$container" 2>&1); then
	finish false "docker logs failed: $(printf '%s' "$out" | tail -n 1)" ''
fi
finish true '' "$out"

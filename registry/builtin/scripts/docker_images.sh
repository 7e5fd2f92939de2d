#!/bin/sh
# docker_images.sh: capdex built-in action maintenance.docker.images.
#
# Lists local docker images with their size. Arguments (JSON on stdin):
#   {"dangling_only": bool (default false)}. Read only.
# Prints one JSON object and exits 0, also when docker or its daemon is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

ARGS='{}'
if [ ! -t 0 ]; then ARGS=$(cat) || ARGS='{}'; fi
ARGS=$(printf '%s\n' "$ARGS" | tr '\n\r\t' '   ')

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
# js VALUE: VALUE as a JSON string (one line, control characters dropped).
js() {
	printf '"%s"' "$(printf '%s' "$1" | tr '\011\012' '  ' | LC_ALL=C tr -d '\000-\010\013-\037' |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}
# run_to SECONDS CMD...: CMD under a time limit when timeout(1) exists.
run_to() {
	t=$1
	shift
	if command -v timeout >/dev/null 2>&1; then timeout "$t" "$@"; else "$@"; fi
}


# docker_state: sets installed, daemon and server_version; the daemon gets 5 seconds to answer.
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

dangling=$(arg_bool dangling_only false)
if [ "$daemon" = false ]; then
	printf '{"installed":%s,"daemon_running":false,"images":[],"count":0,"summary":%s}\n' \
		"$installed" "$(js "$([ "$installed" = true ] && echo 'the docker daemon does not answer' || echo 'docker is not installed')")"
	exit 0
fi
if [ "$dangling" = true ]; then
	lines=$(run_to 15 docker images --filter dangling=true --format '{{json .}}' 2>/dev/null)
else
	lines=$(run_to 15 docker images --format '{{json .}}' 2>/dev/null)
fi
images=$(printf '%s\n' "$lines" | awk '/^\{.*\}$/ { if (n++) printf ","; printf "%s", $0 } END { print "" }')
count=$(printf '%s\n' "$lines" | awk '/^\{.*\}$/ { n++ } END { print n + 0 }')
printf '{"installed":true,"daemon_running":true,"images":[%s],"count":%s,"summary":%s}\n' \
	"$images" "$count" "$(js "$count images")"

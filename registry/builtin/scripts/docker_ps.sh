#!/bin/sh
# docker_ps.sh: capdex built-in action maintenance.docker.ps.
#
# Lists containers (running ones, or all with "all": true) as docker reports them.
# Arguments (JSON on stdin): {"all": bool (default false)}. Read only.
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

all=$(arg_bool all false)
if [ "$daemon" = false ]; then
	printf '{"installed":%s,"daemon_running":false,"all":%s,"containers":[],"count":0,"summary":%s}\n' \
		"$installed" "$all" "$(js "$([ "$installed" = true ] && echo 'the docker daemon does not answer' || echo 'docker is not installed')")"
	exit 0
fi
if [ "$all" = true ]; then
	lines=$(run_to 15 docker ps --all --no-trunc --format '{{json .}}' 2>/dev/null)
else
	lines=$(run_to 15 docker ps --no-trunc --format '{{json .}}' 2>/dev/null)
fi
# Each line is one JSON object; keep only lines that look like one.
containers=$(printf '%s\n' "$lines" | awk '/^\{.*\}$/ { if (n++) printf ","; printf "%s", $0 } END { print "" }')
count=$(printf '%s\n' "$lines" | awk '/^\{.*\}$/ { n++ } END { print n + 0 }')
printf '{"installed":true,"daemon_running":true,"all":%s,"containers":[%s],"count":%s,"summary":%s}\n' \
	"$all" "$containers" "$count" "$(js "$count containers")"

#!/bin/sh
# docker_info.sh: capdex built-in action maintenance.docker.info.
#
# Reports whether the docker client is installed, its version, and whether the daemon answers.
# Arguments: none. Read only. Prints one JSON object and exits 0, also when docker is absent.
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

client=''
context=''
if [ "$installed" = true ]; then
	client=$(run_to 5 docker version --format '{{.Client.Version}}' 2>/dev/null | head -n 1)
	context=$(run_to 5 docker context show 2>/dev/null | head -n 1)
fi
if [ "$installed" = false ]; then
	summary="docker is not installed"
elif [ "$daemon" = false ]; then
	summary="docker client ${client:-?} is installed but the daemon does not answer"
else
	summary="docker client ${client:-?}, daemon $server_version"
fi
printf '{"installed":%s,"client_version":%s,"daemon_running":%s,"server_version":%s,"context":%s,"docker_host":%s,"summary":%s}\n' \
	"$installed" "$(jsn "$client")" "$daemon" "$(jsn "$server_version")" "$(jsn "$context")" "$(jsn "${DOCKER_HOST:-}")" "$(js "$summary")"

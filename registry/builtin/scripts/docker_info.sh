#!/bin/sh
# docker_info.sh: capdex built-in action maintenance.docker.info.
#
# Reports whether the docker client is installed, its version, and whether the daemon answers.
# Arguments: none. Read only. Prints one JSON object and exits 0, also when docker is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

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

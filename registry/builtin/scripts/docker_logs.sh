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

. "$(dirname "$0")/lib.sh"
read_args

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

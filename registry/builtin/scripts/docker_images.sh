#!/bin/sh
# docker_images.sh: capdex built-in action maintenance.docker.images.
#
# Lists local docker images with their size. Arguments (JSON on stdin):
#   {"dangling_only": bool (default false)}. Read only.
# Prints one JSON object and exits 0, also when docker or its daemon is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

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

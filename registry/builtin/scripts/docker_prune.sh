#!/bin/sh
# docker_prune.sh: capdex built-in action maintenance.docker.prune.
#
# Removes stopped containers, unused networks, dangling images and build cache
# (docker system prune), optionally every unused image and volumes. With dry_run (the
# default) nothing is removed: it reports `docker system df` and the command it would run.
# Arguments (JSON on stdin):
#   {"dry_run": bool (default true), "all_images": bool (default false), "volumes": bool (default false)}
# Prints one JSON object and exits 0, also when docker or its daemon is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

docker_state

dry_run=$(arg_bool dry_run true)
all_images=$(arg_bool all_images false)
volumes=$(arg_bool volumes false)
cmd="docker system prune --force"
[ "$all_images" = true ] && cmd="$cmd --all"
[ "$volumes" = true ] && cmd="$cmd --volumes"

# finish PERFORMED ERROR USAGE_LINES OUTPUT_LINES
finish() {
	printf '{"installed":%s,"daemon_running":%s,"dry_run":%s,"performed":%s,"planned_command":%s,"disk_usage":%s,"output_tail":%s,"error":%s}\n' \
		"$installed" "$daemon" "$dry_run" "$1" "$(js "$cmd")" "$(printf '%s' "$3" | jarr)" \
		"$(printf '%s' "$4" | tail -n 20 | jarr)" "$(jsn "$2")"
	exit 0
}
if [ "$installed" = false ]; then finish false "docker is not installed" '' ''; fi
if [ "$daemon" = false ]; then finish false "the docker daemon does not answer" '' ''; fi
usage=$(run_to 30 docker system df 2>/dev/null)
if [ "$dry_run" = true ]; then finish false '' "$usage" ''; fi
set -- system prune --force
[ "$all_images" = true ] && set -- "$@" --all
[ "$volumes" = true ] && set -- "$@" --volumes
if ! out=$(run_to 600 docker "$@" 2>&1); then
	finish false "docker system prune failed" "$usage" "$out"
fi
finish true '' "$usage" "$out"

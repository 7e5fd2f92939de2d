#!/bin/sh
# npm_registry_check.sh: capdex built-in action maintenance.npm.registry_check.
#
# Shows which package registry (mirror) and proxies npm is configured to use. Credentials in
# proxy URLs are masked. Arguments: none. Read only, no network. Prints one JSON object, exit 0.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

# mask URL: user:password@ in a URL replaced by ***@.
mask() {
	printf '%s\n' "$1" | sed 's#^\([a-zA-Z][a-zA-Z0-9+.-]*://\)[^/@]*@#\1***@#'
}
# conf KEY: an npm config value, empty for null/undefined.
conf() {
	v=$(run_to 15 npm config get "$1" 2>/dev/null | head -n 1)
	case $v in
	null | undefined) v='' ;;
	esac
	printf '%s\n' "$v"
}
if ! command -v npm >/dev/null 2>&1; then
	printf '{"installed":false,"registry":null,"is_default_registry":false,"proxy":null,"https_proxy":null,"strict_ssl":null,"summary":"npm is not installed"}\n'
	exit 0
fi
registry=$(conf registry)
proxy=$(mask "$(conf proxy)")
https_proxy=$(mask "$(conf https-proxy)")
strict_ssl=$(conf strict-ssl)
is_default=false
case $registry in
https://registry.npmjs.org | https://registry.npmjs.org/) is_default=true ;;
esac
ssl=null
case $strict_ssl in
true | false) ssl=$strict_ssl ;;
esac
printf '{"installed":true,"registry":%s,"is_default_registry":%s,"proxy":%s,"https_proxy":%s,"strict_ssl":%s,"summary":%s}\n' \
	"$(jsn "$registry")" "$is_default" "$(jsn "$proxy")" "$(jsn "$https_proxy")" "$ssl" "$(js "npm registry ${registry:-unknown}")"

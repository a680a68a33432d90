#!/usr/bin/env bash
# temporal-server and temporal-sql-tool at the version docker-compose.yml pins, built from the Go module proxy
# (CGO_ENABLED=0, -tags disable_grpc_modules, ~3 min on 2 cores) into a cache kept between runs, with the
# server's SQL schemas beside them (what the admin-tools image holds under /etc/temporal/schema). Prints the
# cache directory; a second run finds it there and builds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(sed -n 's#^ *image: temporalio/server:\([0-9.]*\)$#\1#p' docker-compose.yml)
tools=$(sed -n 's#^ *image: temporalio/admin-tools:\([0-9.]*\)$#\1#p' docker-compose.yml | sort -u)
if [ -z "$version" ] || [ "$version" != "$tools" ]; then
  echo "docker-compose.yml must pin temporalio/server and temporalio/admin-tools to one version (found '$version' and '$tools')" >&2
  exit 1
fi
cache="${AGENT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-runtime}/temporal-server-$version"
if [ -x "$cache/bin/temporal-server" ] && [ -x "$cache/bin/temporal-sql-tool" ] && [ -d "$cache/schema/postgresql/v12" ]; then
  echo "$cache"
  exit 0
fi
if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"
  else export PATH="$(bash scripts/temporal-server/install-go.sh "$version"):$PATH"; fi
fi
echo "building temporal-server $version with $(go version)" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The server's go.mod may ask for a newer toolchain than the one installed: let Go fetch it from the proxy.
GOTOOLCHAIN=auto GOBIN="$tmp/bin" CGO_ENABLED=0 go install -tags disable_grpc_modules \
  "go.temporal.io/server/cmd/server@v$version" "go.temporal.io/server/cmd/tools/sql@v$version" >&2
module=$(GOTOOLCHAIN=auto go env GOMODCACHE)/go.temporal.io/server@v$version
mkdir -p "$cache.partial/bin"
cp "$tmp/bin/server" "$cache.partial/bin/temporal-server"
cp "$tmp/bin/sql" "$cache.partial/bin/temporal-sql-tool"
cp -r "$module/schema" "$cache.partial/schema"
chmod -R u+w "$cache.partial"
rm -rf "$cache"
mv "$cache.partial" "$cache"
echo "$cache"

#!/usr/bin/env bash
# Go, for building the Temporal server from source where a machine has none: the toolchain the server's own
# go.mod names, from the Go module proxy (golang.org/toolchain), the one Go download host reachable everywhere
# we run. Prints the directory holding `go`.
set -euo pipefail
version="$1" # the Temporal server version, e.g. 1.30.4
proxy="${GOPROXY_URL:-https://proxy.golang.org}"
go_version=$(curl -fsSL "$proxy/go.temporal.io/server/@v/v$version.mod" | sed -n 's/^go \([0-9.]*\)$/\1/p')
[ -n "$go_version" ] || { echo "no go version in go.temporal.io/server v$version's go.mod" >&2; exit 1; }
case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) echo "unsupported $(uname -m)" >&2; exit 1 ;; esac
root="${GO_TOOLCHAIN_ROOT:-/opt/go-toolchain}/go$go_version"
if [ ! -x "$root/bin/go" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  module="v0.0.1-go$go_version.linux-$arch"
  echo "downloading Go $go_version ($module) from $proxy" >&2
  curl -fsSL -o "$tmp/go.zip" "$proxy/golang.org/toolchain/@v/$module.zip"
  python3 -m zipfile -e "$tmp/go.zip" "$tmp/x"
  mkdir -p "$(dirname "$root")"
  rm -rf "$root"
  mv "$tmp/x/golang.org/toolchain@$module" "$root"
  # zipfile keeps no modes: the toolchain's programs are its bin/ and pkg/tool/ files.
  chmod -R a+x "$root/bin" "$root/pkg/tool"
fi
echo "$root/bin"

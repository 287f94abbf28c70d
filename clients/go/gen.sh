#!/usr/bin/env bash
# Generate the schedsvc.v1 Go stubs (schedsvcv1/*.pb.go) from protos/schedsvc/v1/*.proto.
#
#   clients/go/gen.sh           # regenerate in place (commit the result: Go consumers need it)
#   clients/go/gen.sh --check   # regenerate aside and fail if the committed stubs are stale
#
# protoc is the venv's grpcio-tools (`python -m grpc_tools.protoc`); the two plugins are built
# from the Go module proxy at pinned versions: protoc-gen-go at the protobuf-go version go.mod
# requires (so runtime and generator agree), protoc-gen-go-grpc at PROTOC_GEN_GO_GRPC below.
# The proto has no go_package option (it is shared with Python); the M flags give it one.
set -euo pipefail
PROTOC_GEN_GO_GRPC=v1.6.2
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
py="${PYTHON:-$repo/.venv/bin/python}"
pkg=github.com/schedsvc/schedsvc/clients/go/schedsvcv1
bin="$here/.bin"
protobuf_version="$(cd "$here" && go list -m -f '{{.Version}}' google.golang.org/protobuf)"
mkdir -p "$bin"
stamp="$bin/versions"
want="protoc-gen-go@$protobuf_version protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
if [ ! -x "$bin/protoc-gen-go" ] || [ ! -x "$bin/protoc-gen-go-grpc" ] || \
   [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  (cd "$bin" && GOBIN="$bin" GOFLAGS=-mod=mod go install \
    "google.golang.org/protobuf/cmd/protoc-gen-go@$protobuf_version" && GOBIN="$bin" \
    go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC")
  echo "$want" >"$stamp"
fi
out="$here/schedsvcv1"
if [ "${1:-}" = "--check" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
tmp="$(mktemp -d)"
well_known="$("$py" -c 'from importlib import resources; print(resources.files("grpc_tools") / "_proto")')"
(cd "$repo/protos" && protos=(schedsvc/v1/*.proto) && m=() && for f in "${protos[@]}"; do
   m+=("--go_opt=M$f=$pkg" "--go-grpc_opt=M$f=$pkg"); done &&
 PATH="$bin:$PATH" "$py" -m grpc_tools.protoc -I. "-I$well_known" \
   --go_out="$tmp" --go_opt=paths=source_relative "${m[@]}" \
   --go-grpc_out="$tmp" --go-grpc_opt=paths=source_relative \
   "${protos[@]}")
mkdir -p "$out"
rm -f "$out"/*.pb.go
cp "$tmp"/schedsvc/v1/*.pb.go "$out"/
rm -rf "$tmp"
if [ "${1:-}" = "--check" ]; then
  if ! diff -r -q -I '^// .protoc ' "$out" "$here/schedsvcv1" -x '*_test.go' -x doc.go >/dev/null; then
    diff -r -I '^// .protoc ' "$out" "$here/schedsvcv1" -x '*_test.go' -x doc.go | head -40 >&2
    echo "clients/go/schedsvcv1 is stale: run clients/go/gen.sh and commit the result" >&2
    exit 1
  fi
  echo "clients/go/schedsvcv1: up to date with protos/"
fi

# Sourced by the client tests' run.sh: sets here (the test's folder) and
# bin (the massgen binary: $1, or one built now), and installs the test's
# pinned npm packages with `npm ci` when it has a package.json.
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
bin="${1:-}"
if [ -z "$bin" ]; then
  bin="$(mktemp -d)/massgen"
  (cd "$here/../.." && go build -o "$bin" ./cmd/massgen)
fi
if [ -f "$here/package.json" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

# Sourced by the client tests' run.sh, after prelude.sh: starts `massgen sim
# serve` scripted by $here/scenario.yaml and `massgen serve` on free
# loopback ports, with one config per model named in $sim_models
# (massgen/weather-<name>: one agent on the simulator's model sim-<name>),
# and stops both on exit. Sets url (massgen serve's base, without /v1),
# key (its API key) and serve_log.
work="$(mktemp -d)"
key="client-test-key"
serve_log="$work/serve.log"
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done' EXIT

# wait_url LOG PATTERN PID: the URL a server prints once it listens (10 s at most).
wait_url() {
  local url=""
  for _ in $(seq 1 100); do
    url="$(sed -n "s/.*$2 \(http:\/\/[0-9.:]*\).*/\1/p" "$1" | head -n1)"
    [ -n "$url" ] && break
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "server did not start:" >&2; cat "$1" >&2; return 1
  fi
  echo "$url"
}

"$bin" sim serve --addr 127.0.0.1:0 --scenario "$here/scenario.yaml" 2>"$work/sim.log" &
pids+=($!)
sim="$(wait_url "$work/sim.log" "serving at" "${pids[0]}")/v1"

mkdir "$work/configs"
for m in $sim_models; do
  printf 'agent: {id: solo, backend: {type: chatcompletion, model: sim-%s, base_url: "%s"}}\n' "$m" "$sim" \
    > "$work/configs/weather-$m.yaml"
done
(cd "$work" && MASSGEN_SERVER_API_KEY="$key" exec "$bin" serve --host 127.0.0.1 --port 0 \
  --config @examples/sim_three_agents --config-dir "$work/configs" --no-logs) 2>"$serve_log" &
pids+=($!)
url="$(wait_url "$serve_log" "listening on" "${pids[1]}")"

# stop_serve STATUS: stops massgen serve (which must exit cleanly on
# SIGTERM), prints its log if STATUS is not 0, and exits with STATUS.
stop_serve() {
  kill -TERM "${pids[1]}"
  wait "${pids[1]}" || { echo "massgen serve exited with $? on SIGTERM:"; cat "$serve_log"; exit 1; }
  if [ "$1" -ne 0 ]; then
    echo "massgen serve log:"; cat "$serve_log"
  fi
  exit "$1"
}

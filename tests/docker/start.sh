#!/usr/bin/env bash
# Starts a Docker engine for docker mode's tests (command_line_execution_mode:
# docker; internal/workspace/sandbox/docker_test.go, internal/app/docker_test.go)
# unless one answers already. Debian's docker.io, with the vfs storage driver
# and no bridge or iptables rules, so it starts in a plain VM or container;
# busybox-static makes the tests' image (no registry is needed).
set -euo pipefail
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
if ! command -v dockerd >/dev/null || ! dpkg -s busybox-static >/dev/null 2>&1; then
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io busybox-static >/dev/null
fi
if docker info >/dev/null 2>&1; then
  echo "docker: an engine answers"
  exit 0
fi
log=/tmp/massgen-dockerd.log
$sudo sh -c "nohup dockerd --iptables=false --bridge=none --storage-driver=vfs >$log 2>&1 &"
for _ in $(seq 1 60); do
  if $sudo docker info >/dev/null 2>&1; then
    [ -z "$sudo" ] || $sudo chmod 666 /var/run/docker.sock
    echo "docker: started dockerd ($(docker version --format '{{.Server.Version}}'))"
    exit 0
  fi
  sleep 1
done
echo "dockerd did not start; its log:" >&2
tail -30 "$log" >&2
exit 1

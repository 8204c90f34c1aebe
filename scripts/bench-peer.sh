#!/usr/bin/env bash
# `npm run bench:peer`: the peer benchmark (syslog-ng and a plain Node loop doing the same parse
# work on 1M generated lines) with Rivulet's contenders added, each printing what the peers print:
# k8s (CRI + JSON + drop + labels) as entries without extracted values, Apache as the path alone.
# The peer benchmark lives beside the project (PEER_DIR, default ../shared/bench-peer); see its
# README for the one-time setup (syslog-ng-core, its own npm ci). Extra settings pass through,
# e.g. PIN=0 for one CPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peer="${PEER_DIR:-$root/../shared/bench-peer}"
[ -f "$peer/run.sh" ] || { echo "no peer benchmark at $peer (set PEER_DIR)" >&2; exit 1; }
[ -f "$root/dist/bin/rivulet.js" ] || (cd "$root" && npm run build)
export RIVULET="node $root/dist/bin/rivulet.js"
export RIVULET_ARGS_K8S="${RIVULET_ARGS_K8S:---output entry}"
export RIVULET_ARGS_APACHE="${RIVULET_ARGS_APACHE:---output line}"
exec bash "$peer/run.sh" "$@"

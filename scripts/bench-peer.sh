#!/usr/bin/env bash
# `npm run bench:peer`: the peer benchmark (syslog-ng and a plain Node loop doing the same parse
# work on 1M generated lines) with Rivulet's contenders added, each printing what the peers print:
# k8s (CRI + JSON + drop + labels) as entries without extracted values, Apache as the path alone.
# The peer benchmark lives beside the project (PEER_DIR, default ../shared/bench-peer); see its
# README for the one-time setup (syslog-ng-core, its own npm ci). Extra settings pass through,
# e.g. PIN=0 for one CPU.
#
# Ratios are of CPU seconds (user + system, from /usr/bin/time or the TIMER): after the peer
# benchmark's table, each pair timed in this run is summed up as the median of its per-pair CPU
# ratios A/B, with the wall ratio beside it. On a shared machine the wall ratio mostly says how
# busy the machine was.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peer="${PEER_DIR:-$root/../shared/bench-peer}"
[ -f "$peer/run.sh" ] || { echo "no peer benchmark at $peer (set PEER_DIR)" >&2; exit 1; }
[ -f "$root/dist/bin/rivulet.js" ] || (cd "$root" && npm run build)
export RIVULET="node $root/dist/bin/rivulet.js"
export RIVULET_ARGS_K8S="${RIVULET_ARGS_K8S:---output entry}"
export RIVULET_ARGS_APACHE="${RIVULET_ARGS_APACHE:---output line}"
logs="${PEER_DATA_DIR:-${TMPDIR:-/tmp}/rivulet-peer}/timer-logs"
started=$(date +%s)
bash "$peer/run.sh" "$@"

# The peer benchmark writes one timer log a pair: NAME.txt, or NAME.pinCPUS.txt when pinned.
median_of() { awk -v k="$2" '$0 ~ "^"k" " {n = split($0, f, /[ \t]+/); print f[n-1]; exit}' "$1"; }
echo
echo "CPU ratios A/B (median of per-pair ratios of user+sys seconds; below 1 = A cheaper), wall ratio beside:"
for log in "$logs"/*"${PIN:+.pin$PIN}".txt; do
  [ -e "$log" ] && [ "$(stat -c %Y "$log")" -ge "$started" ] || continue
  name=$(basename "$log" .txt)
  [ -n "${PIN:-}" ] || [[ "$name" != *.pin* ]] || continue
  printf '  %-22s %s× CPU (wall %s×)\n' "${name%.pin*}" "$(median_of "$log" 'A/B cpu')" "$(median_of "$log" 'A/B wall')"
done

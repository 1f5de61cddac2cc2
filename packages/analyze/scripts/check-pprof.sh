#!/bin/sh
# Checks a profile.pb.gz with Go's pprof (Debian: golang-go): `go tool pprof -top` and `-raw` must read it.
# Usage: check-pprof.sh PROFILE_OR_DIR   (a profile.pb.gz, or a report directory holding one)
# Exit codes: 0 read, 1 pprof failed, 2 bad usage or no profile, 3 no `go` on PATH.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 PROFILE_OR_DIR" >&2; exit 2; }
p=$1
[ -d "$p" ] && p=$p/profile.pb.gz
[ -f "$p" ] || { echo "no profile at $p" >&2; exit 2; }
command -v go >/dev/null 2>&1 || { echo "go is not installed (apt-get install golang-go): cannot check $p" >&2; exit 3; }
for sample in bytecodes calls time; do
  echo "== go tool pprof -top -sample_index=$sample $p"
  go tool pprof -top -nodecount=15 -sample_index=$sample "$p" || exit 1
done
echo "== go tool pprof -raw $p (first 40 lines)"
go tool pprof -raw "$p" > "${TMPDIR:-/tmp}/check-pprof.$$" || { rm -f "${TMPDIR:-/tmp}/check-pprof.$$"; exit 1; }
head -40 "${TMPDIR:-/tmp}/check-pprof.$$"
rm -f "${TMPDIR:-/tmp}/check-pprof.$$"
echo "== go tool pprof -top -lines -tagfocus=tier=interpreted $p"
go tool pprof -top -lines -nodecount=10 -tagfocus=tier=interpreted "$p" || exit 1

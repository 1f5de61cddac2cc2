#!/usr/bin/env bash
# jportal quick start, step 1: installs what is missing (Debian 12), builds everything, records a built-in
# example with the agent under the PT emulator, and analyzes it (profiles + report.html in out/quickstart/report).
#   ./setup.sh            set up + run the example
#   ./setup.sh --no-run   set up only
set -euo pipefail
cd "$(dirname "$0")"
run_example=1
[ "${1:-}" = "--no-run" ] && run_example=0

say() { printf '\n== %s\n' "$*" >&2; }

# ---- Debian packages ---------------------------------------------------------------------------
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
jdk_ok() {
  # a JDK >= 17 with javac and the JVMTI headers
  local javac_path home
  javac_path=$(command -v javac 2>/dev/null) || return 1
  home=$(dirname "$(dirname "$(readlink -f "$javac_path")")")
  [ -f "$home/include/jvmti.h" ] || return 1
  local v
  v=$("$javac_path" -version 2>&1 | sed -E 's/^javac ([0-9]+).*/\1/')
  [ "${v:-0}" -ge 17 ] 2>/dev/null
}
jdk_ok || need+=(openjdk-17-jdk-headless)
# libjacoco-java: JaCoCo's agent, CLI and report.dtd (the coverage cross-check); libxml2-utils: xmllint (DTD
# validation); chromium: headless rendering of report.html in the tests
for p in g++ make cmake libipt-dev qemu-user python3 libjacoco-java libxml2-utils chromium; do have_pkg "$p" || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  say "installing Debian packages: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# ---- Node packages and build --------------------------------------------------------------------
say "npm ci"
# npm 11 leaves other platforms' optional packages (turbo's, jest's resolver's) out of package-lock.json and
# then refuses that same lock in `npm ci`; `npm install` with the committed lock installs the same versions.
if ! npm ci --no-audit --no-fund >&2 2>/tmp/jportal-npm-ci.log; then
  if grep -q "Missing: .* from lock file" /tmp/jportal-npm-ci.log; then
    say "npm ci refused the lock file over other platforms' optional packages; npm install instead"
    npm install --no-audit --no-fund >&2
  else
    cat /tmp/jportal-npm-ci.log >&2
    exit 1
  fi
fi
say "building agent, examples, the capture addon (node-gyp, native/capture) and TypeScript packages"
npx turbo run build --output-logs=errors-only >&2
say "jportal doctor (exit 3 = no real Intel PT here; --pt=emulate still works)"
node packages/cli/dist/bin.js doctor >&2 || true

[ $run_example = 1 ] || exit 0

# ---- The main job on a built-in example ---------------------------------------------------------
say "recording examples/switches with the jportal agent, Intel PT emulated under qemu-x86_64"
out=out/quickstart
node packages/cli/dist/bin.js record --pt=emulate --deterministic --force --out "$out" -- java -cp examples/switches/classes Switches 20000
say "jportal inspect $out"
node packages/cli/dist/bin.js inspect "$out"
say "jportal analyze $out (decode, recover, profiles; open $out/report/report.html)"
node packages/cli/dist/bin.js analyze "$out" --sources examples/switches

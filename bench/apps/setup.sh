#!/usr/bin/env bash
# The real-application suite (issue 8): installs the Debian packages of batik, fop, h2, jython, Lucene and sunflow
# that are missing (apt, --no-install-recommends; nothing else is downloaded) and prepares the inputs under
# bench/apps/inputs: the shipped SVG files and Python script (bench/apps/data), an XSL-FO document, SQL scripts
# and a text corpus generated deterministically (gen-inputs.js), and sunflow's benchmark reference images
# (org.sunflow.Benchmark -regen, about a minute). Then `jportal bench apps` runs the suite.
#   bench/apps/setup.sh            install + prepare
#   bench/apps/setup.sh --check    exit 3 naming what is missing, change nothing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inputs="$here/inputs"
say() { printf 'bench/apps: %s\n' "$*" >&2; }

PACKAGES=(libbatik-java fop libh2-java jython liblucene8-java libsunflow-java libjacoco-java)
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
need=()
for p in "${PACKAGES[@]}"; do have_pkg "$p" || need+=("$p"); done

if [ "${1:-}" = "--check" ]; then
  if [ ${#need[@]} -gt 0 ]; then say "missing Debian packages: ${need[*]} (run bench/apps/setup.sh)"; exit 3; fi
  [ -f "$inputs/.ready" ] || { say "inputs not prepared: $inputs (run bench/apps/setup.sh)"; exit 3; }
  exit 0
fi

if [ ${#need[@]} -gt 0 ]; then
  say "installing Debian packages: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

command -v java >/dev/null || { say "no java on PATH (install openjdk-17-jdk-headless)"; exit 3; }
command -v javac >/dev/null || { say "no javac on PATH (install openjdk-17-jdk-headless)"; exit 3; }
command -v node >/dev/null || { say "no node on PATH"; exit 3; }

rm -f "$inputs/.ready"
say "generating inputs into $inputs"
node "$here/gen-inputs.js" "$inputs"

# sunflow: org.sunflow.Benchmark checks its image against resources/golden_<resolution hex>.png on the classpath;
# Debian ships none, -regen renders them into ./resources
sunflow="$inputs/sunflow"
if [ ! -f "$sunflow/resources/golden_0020.png" ] || [ ! -f "$sunflow/resources/golden_0100.png" ]; then
  say "sunflow: rendering the benchmark's reference images (org.sunflow.Benchmark -regen, about a minute)"
  mkdir -p "$sunflow/resources"
  (cd "$sunflow" && java -Djava.awt.headless=true -cp /usr/share/java/sunflow.jar:/usr/share/java/janino.jar org.sunflow.Benchmark -regen >"$sunflow/regen.log" 2>&1) \
    || { say "sunflow -regen failed, see $sunflow/regen.log"; exit 1; }
fi

# sunflow short: a smaller scene through Sunflow's API (Debian's jar has no scene-file parser)
if [ ! -f "$sunflow/RenderScene.class" ] || [ "$here/sunflow/RenderScene.java" -nt "$sunflow/RenderScene.class" ]; then
  say "sunflow: compiling the short workload's driver (bench/apps/sunflow/RenderScene.java)"
  javac -cp /usr/share/java/sunflow.jar -d "$sunflow" "$here/sunflow/RenderScene.java"
fi

touch "$inputs/.ready"
say "ready: node packages/cli/dist/bin.js bench apps [--only NAME] [--size short|medium|full]"

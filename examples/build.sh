#!/usr/bin/env bash
# Compiles every example into examples/<name>/classes (Java 17 class files). Needs javac >= 17.
set -euo pipefail
cd "$(dirname "$0")"
JAVAC="${JAVAC:-javac}"
for d in jit-hot unload threads compute exceptions switches twins recursion; do
  mkdir -p "$d/classes"
  "$JAVAC" --release 17 -d "$d/classes" "$d"/*.java
done
mkdir -p unload/gen/classes
"$JAVAC" --release 17 -d unload/gen/classes unload/gen/Gen.java

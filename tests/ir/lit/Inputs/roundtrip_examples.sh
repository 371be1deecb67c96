#!/usr/bin/env bash
# For every examples/*.psk: dump its IR (each dim bound to 8), read that back as .pir and
# print it again; the two texts must be identical. Usage: roundtrip_examples.sh PRESK EXAMPLES OUT
set -euo pipefail
presk=$1 examples=$2 out=$3
mkdir -p "$out"
count=0
for source in "$examples"/*.psk; do
  name=$(basename "$source" .psk)
  dims=()
  for dim in $(grep -oE '^dim +[A-Za-z_][A-Za-z0-9_]*' "$source" | awk '{print $2}'); do
    dims+=(--dim "$dim=8")
  done
  "$presk" dump --stage ir "$source" "${dims[@]}" > "$out/$name.a.pir"
  "$presk" dump --stage ir "$out/$name.a.pir" > "$out/$name.b.pir"
  diff -u "$out/$name.a.pir" "$out/$name.b.pir"
  "$presk" dump --stage sites "$out/$name.a.pir" > /dev/null
  echo "round trip: $name"
  count=$((count + 1))
done
echo "examples: $count"

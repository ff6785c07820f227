#!/bin/sh
# Fails if a model .so exports (defines in its dynamic symbol table) anything but sinter_*.
set -e
so="$1"
nm -D --defined-only "$so" > /dev/null
bad=$(nm -D --defined-only "$so" | awk '{print $NF}' | grep -v '^sinter_' || true)
if [ -n "$bad" ]; then
  echo "unexpected exports in $so:"; echo "$bad"; exit 1
fi
if nm -D --defined-only "$so" | grep -q 'sinter_generated_program'; then
  echo "sinter_generated_program must stay local"; exit 1
fi
nm -D --defined-only "$so" | awk '{print $NF}'

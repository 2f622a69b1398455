#!/usr/bin/env bash
# Bastion runs a bash template's script with the environment's extra
# variables as name=value arguments, and its environment variables set.
set -euo pipefail

echo "Hello from the Bastion demo (bash)"
for arg in "$@"; do
  echo "argument: ${arg}"
done
echo "DEMO_GREETING is ${DEMO_GREETING:-not set}"
echo "This task ran on $(uname -sr)"

#!/usr/bin/env bash
# A build: Bastion gives each build task the next version of its template
# (1.0.0, 1.0.1, ...) in SEMAPHORE_TASK_TARGET_VERSION.
set -euo pipefail

version="${SEMAPHORE_TASK_TARGET_VERSION:?run this script as the task of a build template}"
echo "Building demo-app ${version}"
mkdir -p dist
printf '%s\n' "${version}" > dist/VERSION
echo "Built demo-app ${version} (dist/VERSION)"

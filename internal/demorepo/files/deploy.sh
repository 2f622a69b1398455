#!/usr/bin/env bash
# A deploy: Bastion gives it the version of the build it deploys in
# SEMAPHORE_TASK_INCOMING_VERSION.
set -euo pipefail

version="${SEMAPHORE_TASK_INCOMING_VERSION:?run this script as the task of a deploy template}"
echo "Deploying demo-app ${version}"
echo "Deployed demo-app ${version}"

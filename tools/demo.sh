#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/demo.sh - one command from a fresh Debian 12 machine to the demo:
# install the dependencies, build, and run examples/hello on 4 ranks
# spread over 2 virtual nodes (2 agents talking over libfabric shm).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/deps.sh"
bash "$top/tools/build.sh"
. "$top/tools/root-env.sh"
cd "$top/_build"
export RMAD_AGENT_PATH="$PWD/rmad"
echo "== rmad-run --vnodes 2 -np 4 examples/hello"
./rmad-run --vnodes 2 -np 4 examples/hello
echo "== round trips through the agents (rank 0 -> rank 1 on the other vnode)"
./rmad-run -q --vnodes 2 -np 2 examples/ping 2000

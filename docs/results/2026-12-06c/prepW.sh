#!/usr/bin/env bash
# session 37: abtest/wv, a manifest of the 128-row A pre-pass and converter tiles (copies of build/'s cubins), which
# callW.sh times on grid cells and on their one-wave column slabs
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/devcall.sh abtest wv 'f4gemm_sm90a_(pab_128x128|cv_128x80)(_p)?\.cubin'

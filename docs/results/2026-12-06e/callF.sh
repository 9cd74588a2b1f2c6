#!/usr/bin/env bash
# session 39 call F (carry ["build", "abtest"]; prepC.sh first), any card: call C's stages on the stream-K build
# whose run state is recomputed per tile from volatile special-register reads
exec bash "$(dirname "$0")/callC.sh"

#!/usr/bin/env bash
# session 39 call D (carry ["build", "abtest"]; prepC.sh first), any card: call C's stages on the stream-K build
# whose run state lives in shared memory
exec bash "$(dirname "$0")/callC.sh"

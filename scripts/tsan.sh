#!/usr/bin/env bash
# ThreadSanitizer build of the core library and its tests; runs the threaded tests
# (8 reader threads on one Array, parallel shard decoding, the shared shard index cache,
# reads that fetch ahead on request threads, write-behind).
# usage: scripts/tsan.sh   Env: TSAN_BUILD_DIR (default build-tsan), JOBS (default 2).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${TSAN_BUILD_DIR:-$ROOT/build-tsan}
cmake -S "$ROOT" -B "$BUILD" -DZARR3_WERROR=ON -DZARR3_BUILD_DRIVER=OFF -DZARR3_UNITY_BUILD=ON \
  -DZARR3_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >"$ROOT/.tsan-cmake.log" 2>&1 || { cat "$ROOT/.tsan-cmake.log"; exit 1; }
rm -f "$ROOT/.tsan-cmake.log"
cmake --build "$BUILD" -j"${JOBS:-2}" --target zarr3_tests
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  "$BUILD/zarr3_tests" --gtest_filter='*Concurrency*:*Parallel*:*Concurrent*:WriteBehind*:ReadAhead*:StoreRequests*:ArrayLock*:CompactMetadata*:ChunkArena.Threads*'

#!/usr/bin/env bash
# Builds libautograph.so at older commits into .old/COMMIT.so (git-ignored: add `/.old/` to
# .git/info/exclude), for paired runs against this build on the GPU machine (bench/ab.py
# variants `NAME=preload=.old/COMMIT.so`; carry `.old` to the device). Each commit is built in
# a worktree under ${TMPDIR:-/tmp}; the worktree is removed afterwards.
#
#   scripts/old-builds.sh 1b72092 8ff584e b59aabe~1
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/old-builds.sh COMMIT..." >&2; exit 2; }
top=$(git rev-parse --show-toplevel)
mkdir -p "$top/.old"
for c in "$@"; do
    h=$(git -C "$top" rev-parse --short "$c")
    wt=$(mktemp -d "${TMPDIR:-/tmp}/ag-old-$h.XXXXXX")
    git -C "$top" worktree add --detach -q "$wt" "$h"
    if make -C "$wt" -j"$(nproc)" lib >"$wt.log" 2>&1; then
        cp "$wt/build/libautograph.so" "$top/.old/$h.so"
        echo "built .old/$h.so ($c)"
    else
        echo "old-builds.sh: $c ($h) did not build; log: $wt.log" >&2
    fi
    git -C "$top" worktree remove --force "$wt"
done

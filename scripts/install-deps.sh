#!/usr/bin/env bash
# Installs the Debian packages libautograph needs to build and test (the CUDA toolkit itself
# is expected at /usr/local/cuda). Does nothing when they are all there.
set -euo pipefail
# g++: bats/cpu_cli.bats builds kernels/common.h's loop without CUDA.
# clang + libclang-rt-dev: libFuzzer for `make fuzz` (tests/sanitize.mk); gcc brings the
# ThreadSanitizer / AddressSanitizer / UBSan runtimes `make check-sanitizers` uses.
# gcc-aarch64-linux-gnu + libc6-dev-arm64-cross + qemu-user: `make cross-aarch64` (part of
# `make test`) cross-builds for aarch64 and runs the unit tests under qemu-aarch64.
pkgs=(make gcc g++ python3 uthash-dev libxxhash-dev bats bats-support bats-assert clang libclang-rt-dev
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null

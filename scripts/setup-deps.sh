#!/bin/sh
# Installs the Debian packages Smelt needs, when missing.
#   setup-deps.sh build   what building Smelt and `make demo` need
#   setup-deps.sh test    that, plus what the test suite needs (PyTorch,
#                         ONNX's Python package, the Python package's
#                         build, pytest and pandas, clang and its libFuzzer
#                         runtime, Chromium for the report's browser
#                         test: several hundred MB)
# As root it runs apt-get; otherwise it prints the command to run and stops.
set -eu

BUILD="build-essential cmake pkg-config libcmocka-dev graphviz
libprotobuf-c-dev protobuf-c-compiler libonnx-dev"
TEST="clang-14 clang libclang-rt-14-dev
python3 python3-numpy python3-torch python3-torchvision python3-onnx
python3-dev python3-setuptools python3-pytest python3-sklearn python3-pandas
chromium"

case "${1:-test}" in
build) PACKAGES="$BUILD" ;;
test) PACKAGES="$BUILD $TEST" ;;
*) echo "usage: setup-deps.sh [build|test]" >&2; exit 2 ;;
esac

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "smelt: missing Debian packages:$missing" >&2
    echo "smelt: run as root:  apt-get update && $cmd" >&2
    exit 1
fi
echo "smelt: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
$cmd

#!/usr/bin/env bash
# Installs what Switchboard's end-to-end tests need on a fresh Debian machine:
# Debian's chromium and its matching chromedriver (used by tests/src/browser.rs), and
# bubblewrap (the exec sandbox, tests/suite/sandbox.rs).
# Idempotent: does nothing (quickly) when they are already installed.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver

if [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]]; then
    echo "setup: chromium and chromedriver already installed, nothing to do"
else
    missing=()
    [[ -x "$CHROMIUM" ]] || missing+=("$CHROMIUM")
    [[ -x "$CHROMEDRIVER" ]] || missing+=("$CHROMEDRIVER")
    echo "setup: missing ${missing[*]}; installing chromium and chromium-driver with apt-get"
    sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq chromium chromium-driver
    echo "setup: installed chromium and chromium-driver"
fi

echo "setup: $("$CHROMIUM" --version 2>/dev/null || echo 'chromium: version unknown')"
echo "setup: $("$CHROMEDRIVER" --version 2>/dev/null || echo 'chromedriver: version unknown')"

BWRAP=/usr/bin/bwrap
if [[ -x "$BWRAP" ]]; then
    echo "setup: bubblewrap already installed, nothing to do"
else
    echo "setup: missing $BWRAP; installing bubblewrap with apt-get"
    sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq bubblewrap
    echo "setup: installed bubblewrap"
fi
echo "setup: $("$BWRAP" --version 2>/dev/null || echo 'bwrap: version unknown')"
if "$BWRAP" --unshare-all --ro-bind / / true 2>/dev/null; then
    echo "setup: bubblewrap can create namespaces here"
else
    echo "setup: WARNING: bubblewrap cannot create namespaces here (user namespaces not permitted?); the sandbox tests will fail saying so" >&2
fi

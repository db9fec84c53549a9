#!/usr/bin/env bash
# Installs what Switchboard's end-to-end tests need on a fresh Debian machine:
# Debian's chromium and its matching chromedriver (used by tests/src/browser.rs).
# Idempotent: does nothing (quickly) when both are already installed.
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

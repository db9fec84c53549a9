#!/usr/bin/env bash
# Installs what Switchboard's end-to-end tests need on a fresh Debian machine:
# Debian's chromium and its matching chromedriver (used by tests/src/browser.rs), and
# bubblewrap (the exec sandbox, tests/suite/sandbox.rs), git (worktree isolation tests),
# the shells and tools the tests' commands run (bash, dash, curl, procps' ps/pkill), npm
# and PostgreSQL. Idempotent: does nothing (quickly) when they are already installed.
# Under CI=true a test whose tool is missing fails (harness::require), never skips.
set -euo pipefail

# apt_install PKG...: installs with apt-get (through sudo when not root), reading the
# package lists once per run however many packages are missing.
apt_lists_read=no
apt_install() {
    local sudo=()
    if [[ "$(id -u)" -ne 0 ]]; then
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    if [[ $apt_lists_read == no ]]; then
        "${sudo[@]}" apt-get update -qq
        apt_lists_read=yes
    fi
    "${sudo[@]}" apt-get install -y -qq "$@"
}

CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver

if [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]]; then
    echo "setup: chromium and chromedriver already installed, nothing to do"
else
    missing=()
    [[ -x "$CHROMIUM" ]] || missing+=("$CHROMIUM")
    [[ -x "$CHROMEDRIVER" ]] || missing+=("$CHROMEDRIVER")
    echo "setup: missing ${missing[*]}; installing chromium and chromium-driver with apt-get"
    apt_install chromium chromium-driver
    echo "setup: installed chromium and chromium-driver"
fi

echo "setup: $("$CHROMIUM" --version 2>/dev/null || echo 'chromium: version unknown')"
echo "setup: $("$CHROMEDRIVER" --version 2>/dev/null || echo 'chromedriver: version unknown')"

BWRAP=/usr/bin/bwrap
if [[ -x "$BWRAP" ]]; then
    echo "setup: bubblewrap already installed, nothing to do"
else
    echo "setup: missing $BWRAP; installing bubblewrap with apt-get"
    apt_install bubblewrap
    echo "setup: installed bubblewrap"
fi
echo "setup: $("$BWRAP" --version 2>/dev/null || echo 'bwrap: version unknown')"
if "$BWRAP" --unshare-all --ro-bind / / true 2>/dev/null; then
    echo "setup: bubblewrap can create namespaces here"
else
    echo "setup: WARNING: bubblewrap cannot create namespaces here (user namespaces not permitted?); the sandbox tests will fail saying so" >&2
fi

# The commands the tests have the agents run: bash and dash (the exec tool's shells),
# curl (the sandbox's network checks), procps (ps, pkill: process-group checks).
tools_missing=()
for pair in bash:bash dash:dash curl:curl ps:procps; do
    tool=${pair%%:*}
    package=${pair#*:}
    if ! command -v "$tool" >/dev/null 2>&1; then
        tools_missing+=("$package")
    fi
done
if [[ ${#tools_missing[@]} -eq 0 ]]; then
    echo "setup: bash, dash, curl and procps already installed, nothing to do"
else
    echo "setup: missing ${tools_missing[*]}; installing them with apt-get"
    apt_install "${tools_missing[@]}"
    echo "setup: installed ${tools_missing[*]}"
fi

# git, for the sub-agent worktree isolation tests (tests/suite/agents_worktree.rs).
if command -v git >/dev/null 2>&1; then
    echo "setup: git already installed, nothing to do"
else
    echo "setup: git is missing; installing git with apt-get"
    apt_install git
    echo "setup: installed git"
fi
echo "setup: $(git --version 2>/dev/null || echo 'git: version unknown')"

# The reference MCP server `@modelcontextprotocol/server-everything` from npm, for the
# suite's test against an MCP implementation we did not write (tests/suite/mcp_everything.rs).
# Installed under ~/.cache (never globally); skipped with a message when npm is missing.
EVERYTHING_DIR="${SWITCHBOARD_MCP_EVERYTHING_DIR:-$HOME/.cache/switchboard-tests/mcp-everything}"
EVERYTHING_VERSION=2026.8.31
if ! command -v npm >/dev/null 2>&1; then
    echo "setup: npm is missing; installing npm with apt-get"
    apt_install npm || echo "setup: WARNING: npm could not be installed; the MCP 'everything' server test will be skipped (it fails under CI=true)" >&2
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "setup: npm is missing; the MCP 'everything' server test will be skipped (it fails under CI=true)"
elif [[ -x "$EVERYTHING_DIR/node_modules/.bin/mcp-server-everything" ]]; then
    echo "setup: @modelcontextprotocol/server-everything already installed in $EVERYTHING_DIR"
else
    echo "setup: installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into $EVERYTHING_DIR"
    mkdir -p "$EVERYTHING_DIR"
    npm install --prefix "$EVERYTHING_DIR" --no-audit --no-fund --silent \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
fi

# Debian's postgresql: the server binaries (initdb, pg_ctl, postgres in
# /usr/lib/postgresql/<version>/bin) with which the test kit starts a throwaway cluster
# (tests/src/pg.rs), and the `postgres` system user it runs them as when the tests run as
# root. Not needed when SWITCHBOARD_TEST_PG_URL points the tests at a server of your own.
pg_initdb() {
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}
if pg_initdb; then
    echo "setup: postgresql already installed, nothing to do"
else
    echo "setup: missing /usr/lib/postgresql/*/bin/initdb; installing postgresql with apt-get"
    apt_install postgresql
    echo "setup: installed postgresql"
fi
for initdb in /usr/lib/postgresql/*/bin/initdb; do
    echo "setup: $("$initdb" --version 2>/dev/null || echo "$initdb: version unknown")"
done

# tests/sh/lib_chrome.sh - headless Chromium for the page tests; source it
# after lib.sh.  Sets $CHROME, or skips when no chromium is installed (.ci/run
# installs it), and defines:
#   chrome ARGS...   chromium, headless, with a fresh profile and no network
#                    use at all, its log appended to $TMP/chrome.err
#   js_errors NAME   fail (naming NAME) when the page logged a script error,
#                    then empty the log
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || skip "chromium not installed (apt-get install chromium)"

chrome() {
    # No sandbox: CI runs as root.
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --disable-extensions --disable-background-networking \
        --user-data-dir="$TMP/profile" --virtual-time-budget=3000 --enable-logging=stderr \
        --v=0 "$@" 2>>"$TMP/chrome.err"
}

js_errors() {
    grep -E 'CONSOLE.*(Uncaught|Error)|Uncaught ' "$TMP/chrome.err" && die "$1: script errors"
    : >"$TMP/chrome.err"
}

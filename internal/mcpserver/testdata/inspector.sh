#!/usr/bin/env bash
# inspector.sh: check weft's MCP server with the reference client, the MCP
# Inspector's CLI mode (npm @modelcontextprotocol/inspector), over both
# transports: stdio (`weft mcp`) and streamable HTTP (`weft serve` at /mcp,
# behind the bearer token). It is a script rather than a Go test so that a
# missing Node never turns into a silently skipped test; run it by hand or
# in CI where Node is installed.
#
# Usage: internal/mcpserver/testdata/inspector.sh
#
# Environment:
#   DATABASE_URL  the database to use (default: db/devdb.sh's server, in a
#                 database named weft_inspector, created if missing)
#   INSPECTOR     the inspector command (default: npx -y
#                 @modelcontextprotocol/inspector@0.22.0, the last release
#                 that runs on Node 20; later ones need Node 22)
#   WEFT_ADDR     where `weft serve` listens (default 127.0.0.1:18089)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd -P)"
INSPECTOR=${INSPECTOR:-"npx -y @modelcontextprotocol/inspector@0.22.0"}
ADDR=${WEFT_ADDR:-127.0.0.1:18089}
TOKEN="inspector-$RANDOM$RANDOM"
WORK="$(mktemp -d)"
SERVE_PID=""
cleanup() {
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; [[ -f $WORK/serve.log ]] && tail -20 "$WORK/serve.log" >&2; exit 1; }
# expect FILE TEXT: the inspector's output holds TEXT.
expect() { grep -q -- "$2" "$1" || { cat "$1" >&2; fail "expected $2"; }; }

export DATABASE_URL="${DATABASE_URL:-$(bash "$ROOT/db/devdb.sh" url weft_inspector)}"
export WEFT_LOG_LEVEL=warn

step "build weft"
(cd "$ROOT" && go build -o "$WORK/weft" ./cmd/weft)

step "weft serve on $ADDR (migrates; API role: nothing works the threads)"
WEFT_ADDR="$ADDR" WEFT_ROLE=api WEFT_API_TOKEN="$TOKEN" "$WORK/weft" serve >"$WORK/serve.log" 2>&1 &
SERVE_PID=$!
for _ in $(seq 100); do
  curl -fsS "http://$ADDR/readyz" >/dev/null 2>&1 && break
  kill -0 "$SERVE_PID" 2>/dev/null || fail "weft serve exited"
  sleep 0.1
done
curl -fsS "http://$ADDR/readyz" >/dev/null || fail "weft serve is not ready"

step "a thread with one reply, through the REST API: create it, then abort it"
api() { curl -fsS -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
THREAD=$(api -X POST "http://$ADDR/api/v1/threads" -d '{"goal":"inspector check: find the flaky test"}' |
  sed -n 's/.*"id":"\([0-9a-f-]*\)".*/\1/p')
[[ -n $THREAD ]] || fail "no thread created"
api -X POST "http://$ADDR/api/v1/threads/$THREAD/abort" -d '{"reason":"stopped by the inspector check"}' >/dev/null
echo "thread $THREAD"

step "stdio: weft mcp, tools/list"
$INSPECTOR --cli -e DATABASE_URL="$DATABASE_URL" -e WEFT_LOG_LEVEL=warn "$WORK/weft" mcp --method tools/list | tee "$WORK/out"
for tool in get-thread-replies list-threads get-thread search-threads; do expect "$WORK/out" "\"name\": \"$tool\""; done

step "stdio: get-thread-replies"
$INSPECTOR --cli -e DATABASE_URL="$DATABASE_URL" -e WEFT_LOG_LEVEL=warn "$WORK/weft" mcp \
  --method tools/call --tool-name get-thread-replies --tool-arg thread_id="$THREAD" --tool-arg limit=10 | tee "$WORK/out"
expect "$WORK/out" "inspector check: find the flaky test"
expect "$WORK/out" "stopped by the inspector check"

step "stdio: search-threads"
$INSPECTOR --cli -e DATABASE_URL="$DATABASE_URL" -e WEFT_LOG_LEVEL=warn "$WORK/weft" mcp \
  --method tools/call --tool-name search-threads --tool-arg query=FLAKY | tee "$WORK/out"
expect "$WORK/out" "$THREAD"

step "streamable HTTP: tools/list with the token"
$INSPECTOR --cli "http://$ADDR/mcp" --transport http --header "Authorization: Bearer $TOKEN" --method tools/list | tee "$WORK/out"
for tool in get-thread-replies list-threads get-thread search-threads; do expect "$WORK/out" "\"name\": \"$tool\""; done

step "streamable HTTP: get-thread-replies, get-thread, list-threads"
$INSPECTOR --cli "http://$ADDR/mcp" --transport http --header "Authorization: Bearer $TOKEN" \
  --method tools/call --tool-name get-thread-replies --tool-arg thread_id="$THREAD" --tool-arg order=newest | tee "$WORK/out"
expect "$WORK/out" "stopped by the inspector check"
$INSPECTOR --cli "http://$ADDR/mcp" --transport http --header "Authorization: Bearer $TOKEN" \
  --method tools/call --tool-name get-thread --tool-arg thread_id="$THREAD" | tee "$WORK/out"
expect "$WORK/out" '\\"status\\":\\"aborted\\"'
$INSPECTOR --cli "http://$ADDR/mcp" --transport http --header "Authorization: Bearer $TOKEN" \
  --method tools/call --tool-name list-threads --tool-arg status=aborted --tool-arg limit=1 | tee "$WORK/out"
expect "$WORK/out" "$THREAD"

step "streamable HTTP: a tool error keeps its code"
$INSPECTOR --cli "http://$ADDR/mcp" --transport http --header "Authorization: Bearer $TOKEN" \
  --method tools/call --tool-name get-thread-replies --tool-arg thread_id=00000000-0000-7000-8000-000000000000 | tee "$WORK/out"
expect "$WORK/out" '"isError": true'
expect "$WORK/out" 'NotFound'

step "streamable HTTP: a wrong token is refused"
if $INSPECTOR --cli "http://$ADDR/mcp" --transport http --header "Authorization: Bearer wrong" --method tools/list >"$WORK/out" 2>&1; then
  cat "$WORK/out"; fail "a wrong token was accepted"
fi
expect "$WORK/out" '"code":"unauthorized"'
echo "refused: $(grep -m1 -o '{"error".*}' "$WORK/out")"

printf '\ninspector check: PASS\n'

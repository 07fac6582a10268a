# push-lib.sh: what the tests of pushing to Pyroscope share: the local
# ingest receiver (push-receiver.py) and reading what it stored.  Sourced
# after test-lib.sh.

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import http.server' >/dev/null 2>&1; then
	skip_all "no python3 for the ingest receiver"
fi
# Loopback only: never through a proxy of the developer's.
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY

# Start a receiver storing into directory $1, with more receiver options;
# sets RECV_PID and URL.
receiver_start() {
	_dir=$1
	shift
	rm -rf "$_dir" "$_dir.port"
	"$PYTHON" "$TEST_SRCDIR/push-receiver.py" --dir "$_dir" \
	    --port-file "$_dir.port" --timeout 60 "$@" &
	RECV_PID=$!
	_i=0
	while ! test -s "$_dir.port"; do
		_i=$((_i + 1))
		test "$_i" -lt 100 || { echo "receiver did not start" >&2; return 1; }
		sleep 0.1
	done
	URL="http://127.0.0.1:$(cat "$_dir.port")"
}

# Stop the receiver started last.
receiver_stop() {
	kill "$RECV_PID" 2>/dev/null
	wait "$RECV_PID" 2>/dev/null
	return 0
}

# The value of query parameter $2 of request file prefix $1.
param() {
	sed -n "s/^$2=//p" "$1.params"
}

# The Total: line of rperf report, in ns.
report_total_ns() {
	"$RPERF" report "$1" >"$1.report" &&
	t=$(sed -n "s/^Total: *//p" "$1.report" | sed "s/ ms.*//" | tr -d ,) &&
	awk -v t="$t" "BEGIN { printf \"%d\", t * 1e6 }"
}


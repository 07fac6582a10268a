# real-lib.sh: real programs nobody here wrote, for the integration tests.
#
#   . "$TEST_SRCDIR/real-lib.sh"
#   inc=$(real_ruby_libs ruby-sidekiq ruby-redis) || exit 1   # -I options
#   port=$(free_port)
#   dir=$(real_ruby_tests) || exit 1        # Ruby's own test suite
#
# Debian's pure-Ruby library packages are fetched with apt-get download
# (never installed: a Debian ruby on the machine would change how Ruby's
# own build behaves) and unpacked with dpkg -x into a directory shared by
# the tests of one build tree.

REAL_DEBS="${TEST_BUILDDIR:-${TMPDIR:-/tmp}}/real-debs"

# Print -I options for the lib directories of the named Debian packages,
# downloading and unpacking those not there yet.
real_ruby_libs() {
	mkdir -p "$REAL_DEBS/root" || return 1
	for _pkg in "$@"; do
		if [ ! -f "$REAL_DEBS/$_pkg.unpacked" ]; then
			(cd "$REAL_DEBS" && rm -f "${_pkg}"_*.deb &&
				apt-get download -q "$_pkg" >/dev/null 2>&1 &&
				dpkg -x "${_pkg}"_*.deb root) || {
				echo "real-lib: cannot fetch Debian package '$_pkg'" >&2
				return 1
			}
			touch "$REAL_DEBS/$_pkg.unpacked"
		fi
	done
	# (Debian's concurrent-ruby keeps its files one level down.)
	for _lib in "$REAL_DEBS"/root/usr/share/rubygems-integration/all/gems/*/lib \
		"$REAL_DEBS"/root/usr/share/rubygems-integration/all/gems/concurrent-ruby-*/lib/concurrent-ruby \
		"$REAL_DEBS"/root/usr/lib/ruby/vendor_ruby; do
		[ -d "$_lib" ] && printf -- '-I%s ' "$_lib"
	done
	echo
}

# Print the lib directory of a Puma built for $RUBY: its C extension
# must match that Ruby, so the bootstrap builds it from Debian's source
# package, once per machine and Ruby (./bootstrap --puma).
real_puma_lib() {
	"$TEST_SRCDIR/../bootstrap" --puma "$RUBY" 2>"${TRASH:-/tmp}/puma-bootstrap.err" || {
		echo "real-lib: cannot provide Puma:" >&2
		tail -n 5 "${TRASH:-/tmp}/puma-bootstrap.err" >&2
		return 1
	}
}

# Print the directory of the test suite of $RUBY (its test/ and tool/
# directories, from the source package it was built from), unpacked
# once per machine by the bootstrap (./bootstrap --ruby-tests).
real_ruby_tests() {
	"$TEST_SRCDIR/../bootstrap" --ruby-tests "$RUBY" 2>"${TRASH:-/tmp}/ruby-tests.err" || {
		echo "real-lib: cannot provide the tests of $RUBY:" >&2
		tail -n 5 "${TRASH:-/tmp}/ruby-tests.err" >&2
		return 1
	}
}

# The total of the samples of PROFILE ($1) with label $2 (KEY=VALUE);
# the folded stacks are left in $3 (tag.folded).
tag_total() {
	"$RPERF" report --format folded --tagfocus "$2" "$1" >"${3:-tag.folded}" &&
	folded_sum "${3:-tag.folded}"
}

# The total of folded file $1 outside the GC (stacks whose leaf is not a
# "[GC ...]" frame): for work whose clock is read around code that
# allocates nothing, where a GC that another part of the request or job
# starts is in its labels and never in its clock.
folded_sum_outside_gc() {
	awk '{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";");
		if (f[n] !~ /^\[GC /) s += w } END { printf "%.0f\n", s }' "$1"
}

# As tag_total, outside the GC (folded_sum_outside_gc).
tag_total_outside_gc() {
	tag_total "$@" >/dev/null &&
	folded_sum_outside_gc "${3:-tag.folded}"
}

# The bin directory of an unpacked gem, e.g. real_gem_bin sidekiq.
real_gem_bin() {
	for _d in "$REAL_DEBS"/root/usr/share/rubygems-integration/all/gems/"$1"-*/bin; do
		[ -d "$_d" ] && { echo "$_d"; return 0; }
	done
	return 1
}

# The labels' ratio of cost, HEAVY/LIGHT ($1, $2: what the samples of
# the light and the heavy kind billed), against the ratio of the thread
# clocks around the same work (LC, HC: $3, $4): within 4%, and the heavy
# kind clearly the heavier (1.5 times at least).
check_label_ratio() {
	_r=$(awk "BEGIN { print $2 / $1 }") &&
	_rc=$(awk "BEGIN { print $4 / $3 }") &&
	echo "labels: light $1 heavy $2 ratio $_r; clocks: light $3 heavy $4 ratio $_rc" &&
	within_pct "$_r" "$_rc" 4 &&
	num_ge "$_r" 1.5
}

# As check_label_ratio, for as many light as heavy units of work, each
# with the same cost around it (a request's middleware, its thread's
# start and end): what the heavy kind was billed beyond the light one
# ($2 - $1) against the same difference of the clocks ($4 - $3), within
# 4%, the constant part of each unit cancelling out; and the heavy kind
# clearly the heavier.
check_label_excess() {
	_d=$(awk "BEGIN { print $2 - $1 }") &&
	_dc=$(awk "BEGIN { print $4 - $3 }") &&
	echo "labels: light $1 heavy $2 excess $_d; clocks: light $3 heavy $4 excess $_dc" &&
	within_pct "$_d" "$_dc" 4 &&
	num_ge "$(awk "BEGIN { print $2 / $1 }")" 1.5
}

# A TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
	"$RUBY" -rsocket -e 's = TCPServer.new("127.0.0.1", 0); puts s.addr[1]; s.close'
}

# Kill process $1 with SIGKILL if it still runs and its command line has
# $2 (the server a test started, not a process that got its pid since).
kill_ours() {
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] &&
		tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -e "$2" &&
		kill -KILL "$1" 2>/dev/null
	return 0
}

# Wait up to $2 tenths of a second for the command $1 to succeed.
wait_for() {
	_n=0
	while ! eval "$1" >/dev/null 2>&1; do
		_n=$((_n + 1))
		[ "$_n" -ge "$2" ] && return 1
		sleep 0.1
	done
}

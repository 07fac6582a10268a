#!/bin/sh
# Where outputs land and what they may write through: a relative -o is
# resolved before the script can chdir, a rewritten file keeps its mode,
# another user's symlink in a shared directory is not followed, and a
# snapshot (a name rperf makes up) is never written through anything
# already there.
. "$TEST_SRCDIR/test-lib.sh"

umask 022

test_expect_success 'a relative -o lands where it was named, whatever the script chdirs to' '
	mkdir sub &&
	"$RPERF" record -q -o rel.folded -e "Dir.chdir(%q(sub)); 100_000.times.sum" &&
	test -s rel.folded && ! test -e sub/rel.folded &&
	"$RPERF" stat -o st.folded -e "Dir.chdir(%q(sub)); 100_000.times.sum" 2>err &&
	test -s st.folded && ! test -e sub/st.folded
'

test_expect_success 'a relative -o is written before exec in the directory it was named in' '
	"$RPERF" record -q -o ex.pb.gz -e "Dir.chdir(%q(sub)); 100_000.times.sum; exec(%q(true))" &&
	test -s ex.pb.gz && ! test -e sub/ex.pb.gz
'

test_expect_success 'a 0600 output rewritten stays 0600' '
	echo old >priv.pb.gz && chmod 600 priv.pb.gz &&
	"$RPERF" record -q -o priv.pb.gz -e "100_000.times.sum" &&
	test "$(stat -c %a priv.pb.gz)" = 600 &&
	"$RPERF" report priv.pb.gz >rep && test_grep "^Mode: +cpu" rep &&
	"$RPERF" report -o priv.txt priv.pb.gz && chmod 640 priv.txt &&
	"$RPERF" report -o priv.txt priv.pb.gz &&
	test "$(stat -c %a priv.txt)" = 640
'

test_expect_success 'a snapshot is never written through a link planted at its name' '
	echo secret >victim && chmod 600 victim &&
	"$RPERF" record -o snap.data -e "
		\$stdout.sync = true
		puts Process.pid
		Dir.chdir(%q(sub))
		t = Time.now; x = 0
		x += 1 while Time.now - t < 2.5" >pid 2>err &
	rpid=$! &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		test -s pid && break; sleep 0.1
	done &&
	pid=$(cat pid) &&
	ln -s victim "snap.data.$pid.1" &&
	sleep 0.5 &&
	"$RPERF" snapshot "$pid" &&
	sleep 0.5 &&
	"$RPERF" snapshot "$pid" &&
	wait $rpid &&
	test "$(cat victim)" = secret &&
	test "$(stat -c %a victim)" = 600 &&
	test -L "snap.data.$pid.1" &&
	test_grep "^rperf record: snapshot: cannot write .snap.data.$pid.1.: File exists$" err &&
	test -s "snap.data.$pid.2" && ! test -e "sub/snap.data.$pid.2" &&
	test_grep "wrote snapshot .snap.data.$pid.2." err &&
	test -s snap.data
'

if test_other_user; then
	test_expect_success 'another user'"'"'s symlink in a shared directory is not followed' '
		mkdir shared && chmod 1777 shared &&
		echo secret >victim2 && chmod 600 victim2 &&
		ln -s "$PWD/victim2" shared/out.pb.gz &&
		chown -h "$OTHER_USER" shared/out.pb.gz &&
		test_expect_code 1 "$RPERF" record -q -o shared/out.pb.gz -e "100_000.times.sum" 2>err &&
		test_grep "cannot write .shared/out.pb.gz.: not following a symbolic link another user owns in a shared directory" err &&
		test "$(cat victim2)" = secret &&
		test "$(stat -c %a victim2)" = 600 &&
		test "$(ls shared)" = out.pb.gz
	'

	test_expect_success 'our own symlink there is followed, and stays a link' '
		ln -s "$PWD/victim2" shared/mine.pb.gz &&
		"$RPERF" record -q -o shared/mine.pb.gz -e "100_000.times.sum" &&
		test -L shared/mine.pb.gz &&
		"$RPERF" report victim2 >rep && test_grep "^Mode: +cpu" rep &&
		test "$(stat -c %a victim2)" = 600
	'
else
	test_skip 'symlinks of another user' 'needs root to make a second user'
fi

test_done

# fish completion for rperf.  Put this file in ~/.config/fish/completions
# or another directory of $fish_complete_path.
#
# Nothing here lists rperf's commands or options: they come from the
# program at completion time ("rperf --list-cmds" and "rperf
# --completion-helper CMD", which prints each command's options table), so
# the completion cannot drift from the code.  A helper line is
# FLAG<TAB>HINT<TAB>HELP, HINT being empty for a flag without a value, a
# list of words, or @file, @dir, @number, @pprof; a line
# "@profile-exts<TAB>EXT|EXT..." lists the extensions of the profiles
# rperf reads (what @pprof completes); the last line,
# "@operands<TAB>KIND", says what the operands are (@rb or @pprof).

# Print rperf's command names (asked once per shell).
function __rperf_commands
    if not set -q __rperf_cmds_cache
        set -g __rperf_cmds_cache (command rperf --list-cmds 2>/dev/null)
    end
    printf '%s\n' $__rperf_cmds_cache
end

# Load command $argv[1]'s flags into __rperf_flags, __rperf_hints,
# __rperf_helps and __rperf_operands; the helper's output is cached per
# command in __rperf_cache_CMD.
function __rperf_load --argument-names cmd
    set -l var __rperf_cache_(string replace -ra '[^A-Za-z0-9_]' _ -- $cmd)
    if not set -q $var
        set -g $var (command rperf --completion-helper $cmd 2>/dev/null)
    end
    set -g __rperf_flags
    set -g __rperf_hints
    set -g __rperf_helps
    set -g __rperf_operands
    set -g __rperf_profile_exts
    for line in $$var
        set -l parts (string split \t -- $line)
        set -q parts[2]; or continue
        if test "$parts[1]" = @operands
            set __rperf_operands $parts[2]
        else if test "$parts[1]" = @profile-exts
            set __rperf_profile_exts (string split '|' -- $parts[2])
        else
            set -a __rperf_flags $parts[1]
            set -a __rperf_hints "$parts[2]"
            set -a __rperf_helps "$parts[3]"
        end
    end
    set -q __rperf_flags[1]
end

# Print the completion hint of flag $argv[1] ("--long", "-s", or a unique
# abbreviation of a long flag, as getopt accepts); fail when it is not
# one of the command's flags.
function __rperf_hint --argument-names flag
    set -l i (contains -i -- $flag $__rperf_flags)
    if test -n "$i"
        echo $__rperf_hints[$i]
        return 0
    end
    string match -q -- '--?*' $flag; or return 1
    set -l found
    for i in (seq (count $__rperf_flags))
        if string match -q -- "$flag*" $__rperf_flags[$i]
            set -a found $i
        end
    end
    test (count $found) -eq 1; or return 1
    echo $__rperf_hints[$found[1]]
end

# Print file names completing $argv[2]: all (kind ""), directories
# ("@dir"), .rb files ("@rb") or profiles ("@pprof"), with directories
# to descend into.  Fish's own file completion does the matching, by
# way of a command that has no completions of its own.
function __rperf_files --argument-names kind cur
    set -l all (complete -C"__rperf_no_such_command_for_files $cur" | string replace -r '\t.*' '')
    switch "$kind"
        case @dir
            string match -- '*/' $all
        case @rb
            string match -r -- '.*(?:/|\.rb)$' $all
        case @pprof
            set -l alt (string escape --style=regex -- $__rperf_profile_exts | string join '|')
            string match -r -- ".*(?:/|\.(?:$alt))\$" $all
        case '*'
            printf '%s\n' $all
    end
end

# Print the values of a flag whose completion hint is $argv[1]; PREFIX
# goes before each (for --flag=value in one word).
function __rperf_values --argument-names hint cur prefix
    switch "$hint"
        case @file
            __rperf_files '' "$cur" | string replace -r '^' -- "$prefix"
        case @dir @pprof
            __rperf_files "$hint" "$cur" | string replace -r '^' -- "$prefix"
        case '@*'
            # @number, or a kind this script does not know: nothing to offer
        case '*'
            printf "$prefix%s\n" (string split ' ' -- $hint)
    end
end

# Print the candidates for the current token of an rperf command line.
function __rperf_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l n (count $tokens)

    if test $n -eq 1
        if string match -q -- '-*' "$cur"
            printf '%s\t%s\n' --help 'show the usage and the list of commands' \
                --version 'show the version and the embedded Ruby'
        else
            __rperf_commands
        end
        return
    end

    set -l cmd $tokens[2]
    switch $cmd
        case help
            test $n -eq 2; and __rperf_commands
            return
        case '-*'
            return # --help and --version take nothing
    end
    __rperf_load $cmd; or return

    # Walk the words before the cursor the way rperf's getopt does: its
    # options end at "--" or at the first word that is not one of them (an
    # operand, or for record one of ruby's own options).  past is the
    # index of that word.
    set -l pending
    set -l past 0
    for i in (seq 3 $n)
        set -l w $tokens[$i]
        if test -n "$pending"
            set pending # this word is the previous flag's value
            continue
        end
        if test "$w" = --
            set past $i
            break
        else if string match -q -- '--?*' $w
            set -l name (string split -m1 = -- $w)[1]
            set -l hint (__rperf_hint $name)
            if test $status -ne 0
                set past $i
                break
            end
            if test -n "$hint"; and not string match -q -- '*=*' $w
                set pending $hint
            end
        else if string match -q -- '-?*' $w
            # Short flags may be bundled (-pq); one with a value takes the
            # rest of the word (-F99) or, if nothing is left, the next one.
            set -l chars (string split '' -- (string sub -s 2 -- $w))
            set -l bad 0
            for j in (seq (count $chars))
                set -l hint (__rperf_hint -$chars[$j])
                if test $status -ne 0
                    set bad 1
                    break
                end
                if test -n "$hint"
                    test $j -eq (count $chars); and set pending $hint
                    break
                end
            end
            if test $bad -eq 1
                set past $i
                break
            end
        else
            set past $i
            break
        end
    end

    if test $past -gt 0
        # The rest belongs to the script (or is more operands).  Right
        # after "--", or after record's skipped "ruby" word, the script is
        # still to come.
        set -l w $tokens[$past]
        if test $past -eq $n; and begin
                test "$w" = --
                or begin
                    test "$__rperf_operands" = @rb
                    and test (string replace -r '.*/' '' -- $w) = ruby
                end
            end
            __rperf_files "$__rperf_operands" "$cur"
        else if test "$__rperf_operands" = @pprof
            __rperf_files @pprof "$cur"
        else
            __rperf_files '' "$cur"
        end
        return
    end
    if test -n "$pending"
        __rperf_values "$pending" "$cur" ''
        return
    end
    if string match -q -- '--?*=*' "$cur"
        set -l parts (string split -m1 = -- "$cur")
        set -l hint (__rperf_hint $parts[1]); or return
        test -n "$hint"; and __rperf_values "$hint" "$parts[2]" "$parts[1]="
        return
    end
    if string match -q -- '-*' "$cur"
        for i in (seq (count $__rperf_flags))
            printf '%s\t%s\n' $__rperf_flags[$i] $__rperf_helps[$i]
        end
        return
    end
    __rperf_files "$__rperf_operands" "$cur"
end

complete -c rperf -f -a '(__rperf_complete)'

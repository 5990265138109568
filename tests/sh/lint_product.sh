#!/bin/sh
# lint_product.sh - the repository speaks of the product only: no tracked
# text file names how it was made: work sessions, issue numbers, rounds of
# measurements, numbered sections of BENCHMARKS.md (whose sections are
# rewritten with the results).  Comments state an invariant and its
# reason; how a figure was reached belongs in a commit body.
#
# Scanned: every file `git ls-files` lists, binary files aside, except
# third_party/ (other projects' text) and the fixtures whose bytes a test
# compares byte for byte (tests/golden/).
# The test first checks itself on planted lines: each process reference
# must be caught, and the word's ordinary uses (around, background, a call
# of round(), a round trip) must not.
. "$ROOT/tests/sh/lib.sh"
command -v git >/dev/null 2>&1 || skip "no git"
git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "not a git checkout"

# Extended regular expressions, matched without regard to case.  Each is
# written (a bracket around one letter) so that this file does not match it.
P_SESSION='\<sessio[n]s? #?[0-9]'
P_ISSUE='\<issu[e]s? #?[0-9]'
P_BENCH='BENCHMARK[S]\.md,? (section )?[0-9]'
# The word alone, taken out of a line first where it is plain English or
# code: a call of round(), a round trip, the other way round, go round.
P_ROUND='\<[r]ound\>'
P_ROUND_OK='\<[r]ound *\(|\<[r]ound[ -]trips?\>|\<way [r]ound\>|\<go(es)? [r]ound\>'

# scan FILE...: one line FILE:LINE:TEXT for each line that names the process
scan() {
    grep -s -n -H -I -i -E -e "$P_SESSION" -e "$P_ISSUE" -e "$P_BENCH" -- "$@"
    grep -s -n -H -I -i -E -e "$P_ROUND" -- "$@" | while IFS= read -r hit_; do
        text_=${hit_#*:}
        text_=${text_#*:}
        printf '%s\n' "$text_" | sed -E "s/$P_ROUND_OK//Ig" | grep -q -i -E -e "$P_ROUND" &&
            printf '%s\n' "$hit_"
    done
    return 0
}

# The self-check, on a copy of a tracked C file: every planted reference is
# caught, one line each, and none of the ordinary uses is.
cp "$ROOT/include/cp_trace.h" "$TMP/planted.c" || die "no include/cp_trace.h"
s=sess i=iss r=rou b=BENCHMARKS
n=$(wc -l <"$TMP/planted.c")
for planted in "${s}ion 3" "${s}ion 17's change" "${i}ue 41" "${i}ue #12" "${b}.md 2q" \
    "${b}.md 1, tenth ${r}nd" "the seventeenth ${r}nd" "${r}nd 3 of the A/B" "Sixth ${r}nd: the clock"; do
    printf '/* measured in %s */\n' "$planted" >>"$TMP/planted.c"
done
scan "$TMP/planted.c" >"$TMP/planted.hits"
got=$(awk -F: -v n="$n" '$2 > n { print $2 }' "$TMP/planted.hits" | sort -un | wc -l)
[ "$got" -eq 9 ] || { cat "$TMP/planted.hits"; die "self-check: $got of 9 planted lines caught"; }
awk -F: -v n="$n" '$2 <= n' "$TMP/planted.hits" >"$TMP/own"
[ ! -s "$TMP/own" ] || { cat "$TMP/own"; die "self-check: include/cp_trace.h itself names the process"; }
cat >"$TMP/ordinary.c" <<'EOF'
/* the writer runs in the background, at around 50 ms, rounding up
 * to a page; a driver round trip; x = round(v, 1); Math.round(t);
 * the recorder never calls the writer, only the other way round;
 * batches go round; the next rounds of the writer; an issue of a
 * session's state; see BENCHMARKS.md for the table. */
EOF
scan "$TMP/ordinary.c" >"$TMP/ordinary.hits"
[ ! -s "$TMP/ordinary.hits" ] || { cat "$TMP/ordinary.hits"; die "self-check: an ordinary use was caught"; }

# The tree.
git -C "$ROOT" ls-files | grep -v -E '^third_party/|^tests/golden/' >"$TMP/files"
[ -s "$TMP/files" ] || die "git ls-files listed nothing"
# (a file deleted in the work tree but not yet in the index is not there)
while IFS= read -r f; do [ -f "$ROOT/$f" ] && printf '%s\n' "$f"; done <"$TMP/files" >"$TMP/present"
(cd "$ROOT" && tr '\n' '\0' <"$TMP/present" | xargs -0 -n 200 grep -s -l -I -i -E \
    -e "$P_SESSION" -e "$P_ISSUE" -e "$P_BENCH" -e "$P_ROUND") >"$TMP/candidates"
: >"$TMP/hits"
while IFS= read -r f; do
    (cd "$ROOT" && scan "$f") >>"$TMP/hits"
done <"$TMP/candidates"
if [ -s "$TMP/hits" ]; then
    cut -c1-200 "$TMP/hits"
    die "$(wc -l <"$TMP/hits") lines in $(cut -d: -f1 "$TMP/hits" | sort -u | wc -l) files name sessions, issues, rounds or sections of BENCHMARKS.md"
fi
echo "$(wc -l <"$TMP/present") tracked files speak of the product only"

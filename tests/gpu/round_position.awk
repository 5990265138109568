# tests/gpu/round_position.awk - mean value by a run's place in its round,
# from lines "round R CONFIG VALUE" in the order the runs ran: shows a bias
# of the place itself (on the H200 the first run of a round was 8-12%
# faster than the others in three sittings, whatever it ran; see
# BENCHMARKS.md 2f).  FAILED runs are left out.
#   awk -f tests/gpu/round_position.awk runs.txt
$1 == "round" {
    if ($2 != last) { pos = 0; last = $2 }
    pos++
    if ($4 + 0 > 0) { sum[pos] += $4; n[pos]++ }
    if (pos > max) max = pos
}
END {
    for (i = 1; i <= max; i++)
        if (n[i])
            printf "place %d in the round: mean %.3f over %d runs\n", i, sum[i] / n[i], n[i]
}

# tests/gpu/round_ratio.awk - the median, over rounds, of configuration c's
# value divided by the plain run's of the same round, from lines
# "round R CONFIG VALUE" (VALUE FAILED or empty for a run that printed none).
#   awk -v c=CONFIG -v fmt=FORMAT [-v none=FORMAT] -f tests/gpu/round_ratio.awk runs.txt
# fmt gets c, the median, the lowest and highest ratio and the number of
# rounds; none (default: print nothing) gets c when no round has both runs.
# (+ 0: a FAILED run counts as 0, i.e. no value; compared as text, "FAILED"
# would pass for a positive number and give the round a ratio of 0 or inf.)
$1 == "round" && $3 == "plain" { p[$2] = $4 + 0 }
$1 == "round" && $3 == c { t[$2] = $4 + 0 }
END {
    n = 0
    for (k in t)
        if (p[k] > 0 && t[k] > 0)
            r[++n] = t[k] / p[k]
    for (i = 1; i <= n; i++)
        for (j = i + 1; j <= n; j++)
            if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
    if (!n) {
        if (none != "")
            printf none, c
        exit
    }
    printf fmt, c, (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2, r[1], r[n], n
}

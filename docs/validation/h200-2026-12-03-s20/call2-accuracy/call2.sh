#!/bin/bash
# Session 20, device call 2 (main at 44dae5f): the accuracy suite with this
# main (its table was last made whole in session 9; session 17's growth
# fixes were run on the growth rows only), and the validation scripts whose
# traces the free-site change touches (under cudaMallocAsync) with this shim
# against 3b9b1cc's (session_batch.sh checkrep; build/vv/a0 as build/oldshim).
# Needs build/ (make, make gpulib) and build/vv (variants.sh a0 3b9b1cc).
O=${OUT:?}
S0=$(date +%s)
rm -rf build/oldshim && cp -r build/vv/a0 build/oldshim
BATCH_LIMIT=350 OUT="$O/batch" bash tests/gpu/session_batch.sh accuracy
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync ONLY="clean_gpt2 clean_resnet check_growth" \
    REPEAT=1 BATCH_LIMIT=$((575 - $(date +%s) + S0)) OUT="$O/batch2" bash tests/gpu/session_batch.sh checkrep
find "$O" -name '*.trace' -delete
tar czf /tmp/call.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/call.tgz "$O/call.tgz"

#!/usr/bin/env bash
# Train RL Budiarjo's models for expe/paper.toml: one per dataset and seed, on the 1000 jobs
# after the evaluated 3000 (jobs 3001-4000; Markovian: 1000 jobs drawn with seed 44), with the
# curriculum simple -> real -> complex and the authors' 10 epochs per stage.
#
#   bash expe/rl-train.sh [SEEDS...]      # from the repository root; default seeds 0 1
#
# Needs the rl dependency group (README) and, in the current folder, either the DAS2 SWF logs
# (workloads/README.md says where they are published) or the authors' own training segments
# DAS2-fsN-3001-4000.json (RakaSP/SPARS-ICON, workloads/curriculum-small/). Models go to
# out/rl-models/DATASET-seedS/model.pt; a finished model is skipped, a stopped one resumes.
set -euo pipefail
seeds=("${@:-0}")
[ $# -eq 0 ] && seeds=(0 1)
mkdir -p workloads out/rl-models
for n in 1 2 3 4; do
    segment=workloads/das2-fs$n-3001-4000.json
    if [ ! -f "$segment" ] && [ -f DAS2-fs$n-3001-4000.json ]; then
        uv run snficon workload convert DAS2-fs$n-3001-4000.json -o "$segment"
    fi
    [ -f "$segment" ] || uv run snficon workload convert DAS2-fs$n-2003-1.swf.gz --skip 3000 \
        --jobs 1000 --nb-res 64 -o "$segment"
    [ -d workloads/curriculum-das2-fs$n ] || uv run snficon workload curriculum "$segment" \
        -o workloads/curriculum-das2-fs$n
done
[ -f workloads/markovian-train-1000.json ] || uv run snficon workload markovian --seed 44 \
    --jobs 1000 -o workloads/markovian-train-1000.json
[ -d workloads/curriculum-markovian ] || uv run snficon workload curriculum \
    workloads/markovian-train-1000.json -o workloads/curriculum-markovian
for dataset in das2-fs1 das2-fs2 das2-fs3 das2-fs4 markovian; do
    for seed in "${seeds[@]}"; do
        out=out/rl-models/$dataset-seed$seed
        if [ -f "$out/summary.json" ] && [ "$(grep -c . "$out/train.csv")" -gt 30 ]; then
            continue
        fi
        c=workloads/curriculum-$dataset
        uv run snficon rl train --platform platforms/aoba-64.xml --epochs 10 --seed "$seed" \
            --train "$c/simple.json" "$c/real.json" "$c/complex.json" -o "$out"
    done
done

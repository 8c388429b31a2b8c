# Session 8 (2026-12-02), call B: issue 14 item 4, the headline grid (experiments/tuner/grids/headline.txt)
# from a fresh database (session 7's stayed on its machine), GRID_BUDGET_S of tuning.
GRID_BUDGET_S=${GRID_BUDGET_S:-430} bash scripts/gpu.sh grid 2>&1 | tail -n 60
ls -la "$OUT"

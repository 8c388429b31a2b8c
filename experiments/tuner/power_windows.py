#!/usr/bin/env python3
"""Clocks and power while each marked command ran: reads a folder of
  marks.txt    "LABEL... start ISO-TIME" and "LABEL... end ISO-TIME [rc N]", a pair per command
  smi.csv      nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu
               --format=csv,noheader -lms 100
  reasons.csv  (optional) nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active ... the same way
and prints a Markdown table, a row per command: the SM clock and the power over the samples where the GPU
was busy, and how many of the window's reasons samples had the power cap set. Then the same over every
window of a label's last word (e.g. the dtype of "1 fp16"). Usage: power_windows.py DIR"""
import datetime
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bad_input import fail  # noqa: E402  (experiments/bad_input.py)

# A sample counts as busy above this: the H100 idled at 73 W and drew ~690 W timing fa3_sm90
# (raw/2026-12-07-dtype-power-h100-065121Z/); the host-side checks between timed runs sit near idle.
BUSY_WATTS = 200.0
SW_POWER_CAP = 0x4  # nvidia-smi's clocks_event_reasons bit: the clocks held down by the power limit


def parse_time(text):
    text = text.strip().replace("-", "/").replace("T", " ")
    return datetime.datetime.strptime(text[:26], "%Y/%m/%d %H:%M:%S.%f")


def read_windows(path):
    windows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            edge = next((i for i, w in enumerate(words) if w in ("start", "end")), None)
            if edge is None or edge + 1 >= len(words):
                continue
            windows.setdefault(" ".join(words[:edge]), {})[words[edge]] = parse_time(words[edge + 1])
    return [(label, w["start"], w["end"]) for label, w in windows.items() if "start" in w and "end" in w]


def read_timed(path, convert):
    """[(time, convert(the other fields))] of nvidia-smi's CSV lines at path; a header or an error line of
    nvidia-smi is passed over."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = [x.strip() for x in line.split(",")]
            try:
                out.append((parse_time(fields[0]), *convert(fields[1:])))
            except (IndexError, ValueError):
                continue
    return out


def read_samples(path):
    """(time, SM MHz, W, degrees C) of each sample."""
    return read_timed(path, lambda f: (float(f[0].split()[0]), float(f[2].split()[0]), float(f[3])))


def read_reasons(path):
    """(time, clock event reasons bits) of each sample; none without the file."""
    return read_timed(path, lambda f: (int(f[0], 16),)) if os.path.exists(path) else []


def summarize(samples, reasons, start, end):
    busy = [s for s in samples if start <= s[0] <= end and s[2] > BUSY_WATTS]
    if not busy:
        return None
    capped = [r for t, r in reasons if start <= t <= end and r & SW_POWER_CAP]
    return dict(busy=len(busy), capped=len(capped), sm_median=statistics.median(s[1] for s in busy),
                sm_min=min(s[1] for s in busy), watts_median=statistics.median(s[2] for s in busy),
                watts_max=max(s[2] for s in busy), temp_max=max(s[3] for s in busy))


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write(__doc__ + "\n")
        sys.exit(2)
    folder = sys.argv[1]
    for name in ("marks.txt", "smi.csv"):
        if not os.path.isfile(os.path.join(folder, name)):
            fail(f"{folder} has no {name}")
    windows = read_windows(os.path.join(folder, "marks.txt"))
    samples = read_samples(os.path.join(folder, "smi.csv"))
    reasons = read_reasons(os.path.join(folder, "reasons.csv"))
    if not windows or not samples:
        fail(f"no marked windows or no nvidia-smi samples in {folder}")
    print("| command | busy samples | power-capped samples in the window | SM MHz median (min) "
          "| W median (max) | max C |")
    print("|---|---|---|---|---|---|")
    by_kind = {}
    for label, start, end in sorted(windows, key=lambda w: w[1]):
        s = summarize(samples, reasons, start, end)
        if s is None:
            print(f"| {label} | 0 | | | | |")
            continue
        by_kind.setdefault(label.split()[-1], []).append(s)
        print(f"| {label} | {s['busy']} | {s['capped']} | {s['sm_median']:.0f} ({s['sm_min']:.0f}) | "
              f"{s['watts_median']:.0f} ({s['watts_max']:.0f}) | {s['temp_max']:.0f} |")
    print("\n| kind | windows | SM MHz, median of the windows' medians | W, median of the windows' medians |")
    print("|---|---|---|---|")
    for kind, rows in sorted(by_kind.items()):
        print(f"| {kind} | {len(rows)} | {statistics.median(r['sm_median'] for r in rows):.0f} | "
              f"{statistics.median(r['watts_median'] for r in rows):.0f} |")


if __name__ == "__main__":
    main()

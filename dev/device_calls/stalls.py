#!/usr/bin/env python3
"""Lab: the stall reasons of one ncu launch (scripts/ncu_profile.sh's raw.csv), largest first, as a share of all.
   python3 dev/device_calls/stalls.py OUT_DIR/raw.csv"""
import csv
import sys


def num(v):
    try:
        return float(v.replace(',', ''))
    except ValueError:
        return None


rows = list(csv.reader(open(sys.argv[1])))
head, val = rows[0], rows[-1]
# WarpStateStats' per-reason stalls: smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
st = [(num(v), h) for h, v in zip(head, val) if 'issue_stalled_' in h and num(v) is not None and 'not_issued' not in h]
st = [x for x in st if x[1].endswith('per_issue_active.ratio')] or st
tot = sum(s for s, _ in st) or 1
for s, h in sorted(st, reverse=True)[:12]:
    print(f"{h:<80} {s:8.2f} ({100 * s / tot:4.1f}%)")

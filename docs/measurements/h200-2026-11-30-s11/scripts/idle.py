# Prints, for each eval JSON given, each timing's idle-trial median and quickest (candidate and baselines).
import json, sys
for path in sys.argv[1:]:
    try:
        results = json.load(open(path))
    except Exception as e:
        print(path, "unreadable:", e); continue
    for r in results:
        rows = []
        for t in r.get("timings", []):
            rows.append(f"n={t.get('n')} kernel med {t.get('host_idle_median_ms',0):.3f} quick {t.get('host_idle_quickest_ms',0):.3f}")
        for n, lst in r.get("baselines", {}).items():
            for b in lst.get("baselines", []):
                t = b.get("timing", {})
                if t: rows.append(f"n={n} {b.get('name')} med {t.get('host_idle_median_ms',0):.3f} quick {t.get('host_idle_quickest_ms',0):.3f}")
        print(path.split('/')[-1], r.get("verdict", r.get("category", "")), "|", "; ".join(rows))

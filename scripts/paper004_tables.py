#!/usr/bin/env python3
"""The paper-004 tables of docs/validation.md from `ftlsim experiment experiments/paper004.toml --json`.

Usage: ftlsim experiment experiments/paper004.toml --json > p004.jsonl
       python3 scripts/paper004_tables.py p004.jsonl
"""
import json
import math
import sys

WORKLOADS = ["AppInstall", "AppUpdate", "AppLaunch", "Browser", "SNS", "Map", "Mp3copy"]
SWEEP = [
    ("paper", "cpm", "CPM S_C = 16 MB"),
    ("S_C=32MB", "cpm", "32"),
    ("S_C=64MB", "cpm", "64"),
    ("S_C=128MB", "cpm", "128"),
    ("K=2", "kcpm", "K-CPM K = 2"),
    ("paper", "kcpm", "4"),
    ("K=8", "kcpm", "8"),
    ("K=4, CAMT+CDMT resident", "kcpm", "K = 4, resident"),
]


def load(path):
    runs = {}
    for line in open(path):
        record = json.loads(line)
        runs[(record["workload"], record["point"].get("config"), record["result"]["ftl"])] = record["result"]["report"]
    return runs


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(path):
    runs = load(path)
    print("| workload | FTL | flash time (s) | GC overhead | map loading | GC + map (s) | WA | GC erases "
          "| IntraGC | InterGC | mean N_alpha | free pages at GC | mean response (ms) | p99 (ms) |")
    print("|---" * 14 + "|")
    for w in WORKLOADS:
        for ftl in ["dftl", "cpm", "kcpm"]:
            r = runs[(w, "paper", ftl)]
            t, cl, resp = r["flash_time"], r.get("clusters"), r["response"]
            gc_map = t["total_s"] * (t["gc_overhead"] + t["map_loading_overhead"])
            mark = "!" if resp["saturated"] else ""
            cells = [w, ftl, f"{t['total_s']:.1f}", f"{t['gc_overhead']:.1%}", f"{t['map_loading_overhead']:.1%}",
                     f"{gc_map:.1f}", f"{r['write_amplification']:.2f}", str(r["erases"]["gc"])]
            if cl:
                cells += [str(cl["intra_gcs"]), str(cl["inter_gcs"]), f"{cl['mean_associativity']:.2f}",
                          f"{cl['mean_remaining_pages_at_gc']:.0f}"]
            else:
                cells += ["-"] * 4
            cells += [f"{resp['mean_us'] / 1000:.1f}{mark}", f"{resp['all']['p99_us'] / 1000:.1f}"]
            print("| " + " | ".join(cells) + " |")
    k_inter = sum(r["clusters"]["k_inter_gcs"] for r in runs.values() if r.get("clusters"))
    print(f"\nK-InterGC invocations over every run: {k_inter}")

    def ratio(a, b, field):
        return geomean([field(runs[(w,) + a]) / field(runs[(w,) + b]) for w in WORKLOADS])

    total = lambda r: r["flash_time"]["total_s"]
    gc_map = lambda r: r["flash_time"]["total_s"] * (r["flash_time"]["gc_overhead"] + r["flash_time"]["map_loading_overhead"])
    print("\n| | total flash time | GC + map-loading time |\n|---|---|---|")
    for name, a, b in [("CPM / DFTL", ("paper", "cpm"), ("paper", "dftl")),
                       ("K-CPM / CPM", ("paper", "kcpm"), ("paper", "cpm")),
                       ("K-CPM with CAMT and CDMT resident / CPM", ("K=4, CAMT+CDMT resident", "kcpm"), ("paper", "cpm"))]:
        print(f"| {name} | {ratio(a, b, total):.3f} | {ratio(a, b, gc_map):.3f} |")
    calm = [w for w in WORKLOADS if not any(runs[(w, "paper", f)]["response"]["saturated"] for f in ["dftl", "cpm"])]
    rt = geomean([runs[(w, "paper", "cpm")]["response"]["mean_us"] / runs[(w, "paper", "dftl")]["response"]["mean_us"]
                  for w in calm])
    print(f"\nMean response time CPM / DFTL, geometric mean over {len(calm)} unsaturated workloads ({', '.join(calm)}): {rt:.3f}")

    print("\n| workload | " + " | ".join(label for _, _, label in SWEEP) + " |")
    print("|---" * (len(SWEEP) + 1) + "|")
    rows = [("tot", lambda r: f"{total(r):.1f}"), ("gc", lambda r: f"{r['flash_time']['gc_overhead']:.1%}"),
            ("mp", lambda r: f"{r['flash_time']['map_loading_overhead']:.1%}"),
            ("rem", lambda r: f"{r['clusters']['mean_remaining_pages_at_gc']:.0f}")]
    for tag, cell in rows:
        for w in WORKLOADS:
            print(f"| {w} ({tag}) | " + " | ".join(cell(runs[(w, config, ftl)]) for config, ftl, _ in SWEEP) + " |")


if __name__ == "__main__":
    main(sys.argv[1])

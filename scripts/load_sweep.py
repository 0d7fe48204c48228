"""Mean response time against offered load for every page-mapped FTL on a many-die device.

The offered load is a share of the device's raw page-write bandwidth (dies / (program + transfer
time)) divided by the write amplification the FTL reaches on this workload (measured first, at
10% load): at load 1.0 the FTL's own flash writes would keep every die busy. A queueing system's
response time rises slowly, then steeply towards 1.0; at 0.5 nothing saturates.

    .venv/bin/python scripts/load_sweep.py [out.csv] [plot.png]

Writes the table as CSV (default: standard output) and, with matplotlib installed, the plot.
"""

import csv
import sys

import ftlsim

# 8 channels x 4 chips x 2 dies x 2 planes (the layout of MQSim's default SSD) with the
# tlc-nvme preset's latencies, scaled down to 64 blocks of 64 pages per plane (8 GiB), 25% spare.
DEVICE = [
    "device.geometry.dies_per_chip=2",
    "device.geometry.planes_per_die=2",
    "device.geometry.blocks_per_plane=64",
    "device.geometry.pages_per_block=64",
    "device.overprovisioning=0.25",
    "precondition.mode=age",
    "precondition.age_factor=1",
]
FTLS = ["pftl", "dftl", "cdftl", "sftl", "tpftl", "scftl", "optimal"]
# S-FTL caches whole translation pages: its default cache holds none of 16 KB.
FTL_SETS = {"sftl": ["ftl.sftl.cache_bytes=65536"]}
LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
REQUESTS = 30_000


def run(ftl: str, iops: float) -> dict:
    spec = f"requests={REQUESTS},read=0,size=4k,arrival=poisson:{iops:.3f}"
    return ftlsim.run({"preset": "tlc-nvme"}, ftl=ftl, set=DEVICE + FTL_SETS.get(ftl, []), synthetic=spec)


def raw_page_writes_per_second() -> float:
    config = run("pftl", 1000)["config"]["device"]
    g, lat = config["geometry"], config["latency"]
    dies = g["channels"] * g["chips_per_channel"] * g["dies_per_chip"]
    page_bytes = g["page_size"] + (g["spare_size"] if lat["transfer_includes_spare"] else 0)
    program_s = lat["program_us"] / 1e6 + page_bytes * lat["bus_ns_per_byte"] / 1e9
    return dies / program_s


def main() -> None:
    out_csv = sys.argv[1] if len(sys.argv) > 1 else None
    out_png = sys.argv[2] if len(sys.argv) > 2 else None
    raw = raw_page_writes_per_second()
    rows = []
    for ftl in FTLS:
        wa = run(ftl, 0.1 * raw)["report"]["write_amplification"]
        for load in LOADS:
            report = run(ftl, load * raw / wa)["report"]
            rows.append(
                {
                    "ftl": ftl,
                    "load": load,
                    "write_amplification": round(wa, 3),
                    "iops": round(load * raw / wa, 1),
                    "mean_us": round(report["response"]["mean_us"], 1),
                    "p99_us": round(report["response"]["all"]["p99_us"], 1),
                    "die_utilization": round(report["dies"]["mean_utilization"], 3),
                    "saturated": report["response"]["saturated"],
                }
            )
    sink = open(out_csv, "w", newline="") if out_csv else sys.stdout
    writer = csv.DictWriter(sink, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    if out_png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for ftl in FTLS:
            points = [r for r in rows if r["ftl"] == ftl]
            ax.plot([r["load"] for r in points], [r["mean_us"] for r in points], marker="o", label=ftl)
        ax.set_yscale("log")
        ax.set_xlabel("offered load (share of raw page-write bandwidth / WA)")
        ax.set_ylabel("mean response time (us)")
        ax.set_title("Random one-page writes, 64 dies (8 ch x 4 chips x 2 dies), parallel timing")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out_png, dpi=110)


if __name__ == "__main__":
    main()

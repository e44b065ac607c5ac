"""What Benchmarks/run left in its results folder, read for report.py: the machine, each figure's raw
files, the in-process benchmarks' JSON, and the xrun soak's check.
"""
import re
import statistics
import sys
from pathlib import Path

# Cycles in which only our nodes glitched, beyond those in which only the peer's did, that the soak
# tolerates over its window: a stall of our process of its own shows as dozens to hundreds.
OWN_XRUN_TOLERANCE = 5


def median(values):
    return statistics.median(values) if values else float("nan")


def machine(out):
    info = {}
    for line in (out / "machine.txt").read_text().splitlines():
        key, _, value = line.partition(" ")
        info[key] = value
    return info


def cpu_table(out):
    rows = {}
    text = (out / "cpu.txt").read_text() if (out / "cpu.txt").exists() else ""
    for line in text.split("\n"):
        parts = line.split()
        if len(parts) != 6:
            continue
        impl, n, q, _, total, daemon = parts[0], int(parts[1]), int(parts[2]), parts[3], float(parts[4]), float(parts[5])
        rows.setdefault((impl, n, q), []).append((total, daemon))
    lines = [
        "| quantum | streams | SharedSession (% core) | per stream | daemon + WP share | N × pw-play | per stream "
        "| C floor | per stream | vs pw-play (goal ≤ 0.5) | vs C floor (goal ≤ 1.2) | C floor, overlays mixed "
        "| its ratio to pw-play | SharedSession, overlays mixed | its ratio to pw-play (goal ≤ 0.5) "
        "| to the C floor's --mixed (goal ≤ 1.2) | client processes alone: ours / floor's |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    misses = []
    for q in (256, 1024):
        for n in (1, 8, 32, 64):
            med = {impl: median([t for t, _ in rows.get((impl, n, q), [])]) for impl in ("engine", "pw-play", "floor")}
            if any(v != v for v in med.values()):
                continue
            daemon = median([d for _, d in rows.get(("engine", n, q), [])])
            ours_client = median([t - d for t, d in rows.get(("engine", n, q), [])])
            floor_client = median([t - d for t, d in rows.get(("floor", n, q), [])])
            mixed = median([t for t, _ in rows.get(("floor-mixed", n, q), [])])
            ours_mixed = median([t for t, _ in rows.get(("engine-mixed", n, q), [])])
            mixed_vs_play = ours_mixed / med["pw-play"] if med["pw-play"] else float("nan")
            mixed_vs_floor = ours_mixed / mixed if mixed else float("nan")
            mark_mixed_play = "" if mixed_vs_play <= 0.5 or mixed_vs_play != mixed_vs_play else " ✗"
            mark_mixed_floor = "" if mixed_vs_floor <= 1.2 or mixed_vs_floor != mixed_vs_floor else " ✗"
            vs_play = med["engine"] / med["pw-play"] if med["pw-play"] else float("nan")
            vs_floor = med["engine"] / med["floor"] if med["floor"] else float("nan")
            mark_play = "" if vs_play <= 0.5 else " ✗"
            mark_floor = "" if vs_floor <= 1.2 else " ✗"
            if mark_play or mark_floor:
                misses.append((q, n, vs_play, vs_floor))
            lines.append(
                f"| {q} | {n} | {med['engine']:.2f} | {med['engine'] / n:.3f} | {daemon:.2f} | {med['pw-play']:.2f} | "
                f"{med['pw-play'] / n:.3f} | {med['floor']:.2f} | {med['floor'] / n:.3f} | "
                f"{vs_play:.2f}{mark_play} | {vs_floor:.2f}{mark_floor} | {mixed:.2f} | {mixed / med['pw-play']:.2f} | "
                f"{ours_mixed:.2f} | {mixed_vs_play:.2f}{mark_mixed_play} | {mixed_vs_floor:.2f}{mark_mixed_floor} | "
                f"{ours_client:.2f} / {floor_client:.2f} |"
            )
    repeats = max((len(v) for v in rows.values()), default=0)
    return "\n".join(lines), misses, repeats


def xrun_result(path):
    if not path.exists():
        return None
    text = path.read_text()
    cycles = re.search(r"cycles=(\d+) late_driver_cycles=(\d+) cycles_with_err: first=(\d+) second=(\d+) both=(\d+)", text)
    node_err = re.findall(r"^node \d+ (\S+) cycles=\d+ err=(\d+)", text, re.M)
    capture = lambda name: name.endswith(".voice") or name.endswith(".monitor")
    ours_err = sum(int(e) for n, e in node_err if n.startswith("sharedsession.") and not capture(n))
    capture_err = sum(int(e) for n, e in node_err if n.startswith("sharedsession.") and capture(n))
    peer_err = sum(int(e) for n, e in node_err if not n.startswith("sharedsession."))
    captured = re.search(r"capture=(\d+) capture_only=(\d+)", text)
    nodes = len(re.findall(r"^node ", text, re.M))
    if not cycles:
        return None
    total, late, first, second, both = (int(g) for g in cycles.groups())
    return {
        "cycles": total, "late": late, "ours_cycles": first, "peer_cycles": second, "both": both,
        "own_only": first - both, "peer_only": second - both, "ours_err": ours_err, "peer_err": peer_err,
        "nodes": nodes, "capture_err": capture_err,
        "capture_cycles": int(captured.group(1)) if captured else None,
        "capture_only": int(captured.group(2)) if captured else None,
    }


def duck(out, q):
    path = out / f"duck-{q}.txt"
    if not path.exists():
        return None
    engine = [float(v) for v in re.findall(r"^engine-duck-ms (\S+)", path.read_text(), re.M)]
    peer = [float(v) for v in re.findall(r"^pw-cli-ms (\S+)", path.read_text(), re.M)]
    trials = re.search(r"duck-trials engine (\d+)/(\d+) pw-cli (\d+)/(\d+)", path.read_text())
    return engine, peer, trials.groups() if trials else None


def inprocess(out):
    """{benchmark: {metric label: p50 string}} plus p99 for wall clock, from the markdown export."""
    path = out / "inprocess.md"
    if not path.exists():
        return {}, ""
    text = path.read_text()
    results = {}
    for section in re.split(r"^### ", text, flags=re.M)[1:]:
        name, _, body = section.partition("\n")
        metrics = {}
        for row in body.splitlines():
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(cells) < 9 or cells[0].startswith(":") or cells[0] == "Metric":
                continue
            metrics[cells[0].rstrip(" *")] = {"p25": cells[2], "p50": cells[3], "p75": cells[4], "p99": cells[6], "p100": cells[7], "samples": cells[8]}
        results[name.strip()] = metrics
    return results, text


def number(cell):
    try:
        return float(cell.replace(",", ""))
    except (ValueError, AttributeError):
        return float("nan")


def wall_percentiles_ns(metrics, low, high):
    """Two percentiles of the wall-clock time (keys such as "p50", "p99"), in ns."""
    for label, values in metrics.items():
        match = re.match(r"Time \(wall clock\) \((ns|μs|us|ms|s)\)", label)
        if match:
            scale = {"ns": 1, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}[match.group(1)]
            return number(values[low]) * scale, number(values[high]) * scale
    return float("nan"), float("nan")


def wall_ns(metrics):
    """p50 and p99 of the wall-clock time, in ns."""
    return wall_percentiles_ns(metrics, "p50", "p99")


def wall_quartiles_ns(metrics):
    """p25 and p75 of the wall-clock time, in ns: where a bimodal figure's two regimes show."""
    return wall_percentiles_ns(metrics, "p25", "p75")


def heap_bytes(metrics):
    """The p50 of "heap bytes each", which the export scales to thousands ("heap bytes each (K)") from 10,000."""
    for label, values in metrics.items():
        if label == "heap bytes each":
            return values["p50"]
        if label == "heap bytes each (K)":
            return f"about {number(values['p50']) * 1000:,.0f}"
    return "?"


def mallocs(metrics):
    for label, values in metrics.items():
        if label.startswith("Malloc (total)"):
            return number(values["p50"])
    return float("nan")


def check(out):
    failed = False
    for name in ("xruns-floor.txt", "xruns-pw-play.txt", "xruns-churn.txt"):
        x = xrun_result(out / name)
        if x is None:
            print(f"xrun soak: no result in {name}")
            failed = True
            continue
        excess = x["own_only"] - x["peer_only"]
        status = "FAIL" if excess > OWN_XRUN_TOLERANCE else "ok"
        print(
            f"xrun soak {name}: our nodes erred alone in {x['own_only']} cycles, the peer's alone in {x['peer_only']}, "
            f"together in {x['both']} of {x['cycles']}: {status}"
        )
        failed = failed or excess > OWN_XRUN_TOLERANCE
    text = (out / "soak.txt").read_text() if (out / "soak.txt").exists() else ""
    summary = re.search(r"soak-summary (.*)", text)
    if not summary:
        print("soak: no summary in soak.txt")
        sys.exit(1)
    fields = dict(zip(summary.group(1).split()[0::2], summary.group(1).split()[1::2]))
    faults = int(fields.get("stream-faults", "1"))
    restore = abs(float(fields.get("level-after-db", "0")) - float(fields.get("level-before-db", "99")))
    print(f"soak: {faults} stream faults, main restored to {restore:.3f} dB of where it started")
    failed = failed or faults > 0 or restore > 0.1
    sys.exit(1 if failed else 0)

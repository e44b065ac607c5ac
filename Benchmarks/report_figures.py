"""The figures the live tests bound at five times their quiet value, over many runs: each test prints
them as `[measure]` lines, Benchmarks/run runs the tests many times on each daemon version and keeps the
lines in RESULTS/figures-*.log, and this module turns them into BENCHMARKS.md's section and the gate on
their medians (report.py --check-figures)."""
import re
from pathlib import Path

from report_results import median

# The loaded machine's allowance over a quiet figure (Tests/SharedSessionTestSupport/LoadedMachine.swift).
FACTOR = 5

ENDING = re.compile(
    r"^\[measure\] host ending (?P<ending>.+?), (?P<player>pw-play|mpv), (?P<carrier>loopback|soft volumes): "
    r"heard back (?P<heard>[\d.]+ ms|never) after the ending at quantum (?P<quantum>\d+) "
    r"\(quiet figure (?P<figure>[\d.]+) ms\)"
)
GAP = re.compile(r"^\[measure\] quantum (?P<initial>\d+) -> (?P<forced>\d+) -> .*gap ours (?P<ours>[\d.]+) ms, "
                 r"pw-play's (?P<theirs>[\d.]+) ms")


def versions(out, stem):
    """The logs of one figure, by daemon version: RESULTS/STEM-0.3.log and RESULTS/STEM-1.4.log."""
    for version in ("0.3", "1.4"):
        path = Path(out) / f"{stem}-{version}.log"
        if path.exists():
            yield ("0.3.65" if version == "0.3" else "1.4.2"), path.read_text().splitlines()


def handback_rows(out):
    """(version, ending, player, carrier, runs, median, worst, quiet figure, never heard back)."""
    rows = []
    for version, lines in versions(out, "figures-endings"):
        groups = {}
        for line in lines:
            m = ENDING.match(line)
            if not m:
                continue
            key = (m["ending"], m["player"], m["carrier"])
            heard, figures, never = groups.setdefault(key, ([], [], [0]))
            figures.append(float(m["figure"]))
            if m["heard"] == "never":
                never[0] += 1
            else:
                heard.append(float(m["heard"].split()[0]))
        for (ending, player, carrier), (heard, figures, never) in sorted(groups.items()):
            rows.append((version, ending, player, carrier, len(heard) + never[0],
                         median(heard) if heard else None, max(heard) if heard else None, max(figures), never[0]))
    return rows


def gap_rows(out):
    """(version, forced quantum, runs, ours median, ours worst, pw-play median, pw-play worst, quiet figure)."""
    rows = []
    for version, lines in versions(out, "figures-renegotiation"):
        ours, theirs, forced = [], [], 0
        for line in lines:
            m = GAP.match(line)
            if m:
                ours.append(float(m["ours"]))
                theirs.append(float(m["theirs"]))
                forced = int(m["forced"])
        if ours:
            figure = forced * 1000 / 48000 + 2.5
            rows.append((version, forced, len(ours), median(ours), max(ours), median(theirs), max(theirs), figure))
    return rows


def ms(value):
    return "—" if value is None else f"{value:.1f} ms"


def figures_section(out):
    """BENCHMARKS.md's section on the figures the tests bound, or nothing when no run made them."""
    handback, gaps = handback_rows(out), gap_rows(out)
    if not handback and not gaps:
        return []
    md = ["## 11. The figures the tests bound\n"]
    md.append(
        "The live tests assert behaviour a user notices, and bound each time they read off the wall clock at "
        f"{FACTOR}× its quiet figure, a bound a machine loaded by CI's side builds keeps; the figures themselves "
        "are measured here over many runs, each test run again on a private daemon of each version, and the "
        "gate (`report.py --check-figures`) fails when a **median** passes its quiet figure, never on one sample.\n"
    )
    if handback:
        md.append(
            "**A player heard back after its host ends** (`HostEndingTests`, `SHAREDSESSION_ENDINGS` picking the "
            "endings, `SHAREDSESSION_ENDING_RUNS` runs each): from the ending to the first 5 ms window at the sink's "
            "monitor within 0.5 dB of the user's level. The quiet figure: three quanta and 10 ms (and through a "
            "loopback one quantum and 25 ms more for the move back); the tests' bound is five times it.\n"
        )
        md.append("| daemon | ending | player | carrier | runs | median | worst | quiet figure | tests' bound | never back |")
        md.append("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for version, ending, player, carrier, runs, mid, worst, figure, never in handback:
            md.append(f"| {version} | {ending} | {player} | {carrier} | {runs} | {ms(mid)} | {ms(worst)} | "
                      f"{ms(figure)} | {ms(figure * FACTOR)} | {never} |")
        md.append("")
    if gaps:
        md.append(
            "**The gap a renegotiation leaves** (`QuantumChangeTests`: the quantum forced from 1024 to 4096 and "
            "back while our stream and `pw-play` play a tone): the longest stretch 6 dB under the tone's level. "
            "0.3.65 changes the quantum under running streams (no gap); 1.x pauses every stream. The quiet "
            "figure: one cycle of the new quantum and 2.5 ms.\n"
        )
        md.append("| daemon | quantum | runs | ours, median | ours, worst | pw-play, median | pw-play, worst | quiet figure | tests' bound |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for version, forced, runs, mid, worst, peer_mid, peer_worst, figure in gaps:
            md.append(f"| {version} | {forced} | {runs} | {ms(mid)} | {ms(worst)} | {ms(peer_mid)} | "
                      f"{ms(peer_worst)} | {ms(figure)} | {ms(figure * FACTOR)} |")
        md.append("")
    return md


def check_figures(out):
    """The gate on medians: the failures, one line each (empty when every median keeps its quiet figure)."""
    failures = []
    for version, ending, player, carrier, runs, mid, worst, figure, never in handback_rows(out):
        if mid is None or mid > figure or never * 2 > runs:
            failures.append(f"{version}, {ending}, {player}, {carrier}: heard back median {ms(mid)} over {runs} "
                            f"runs ({never} never), the quiet figure {ms(figure)}")
    for version, forced, runs, mid, worst, peer_mid, peer_worst, figure in gap_rows(out):
        if mid > figure:
            failures.append(f"{version}: renegotiation gap median {ms(mid)} over {runs} runs at quantum {forced}, "
                            f"the quiet figure {ms(figure)}")
    return failures

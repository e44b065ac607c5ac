#!/usr/bin/env python3
"""The section of BENCHMARKS.md on a unit's death seen from outside the host, from the `[measure]`
lines Benchmarks/unit-death kept (unit-death.txt in the results folder).

    report_unit_death.py RESULTS-DIR                    print the section
    report_unit_death.py --splice RESULTS-DIR FILE.md   replace the section in FILE.md (or add it
                                                        after section 4b)
"""
import re
import sys
from pathlib import Path

from report_results import median

TITLE = "## 4c. A unit's death seen from outside (SharedSessionRemote)"
RIG = Path(__file__).resolve().parent.parent / "Tests/SharedSessionRemoteTests/RemoteRig.swift"


def deaths(out):
    """{wire version: (released ms, gain ms)} over every run, and the load before and after."""
    path = out / "unit-death.txt"
    text = path.read_text() if path.exists() else ""
    figures = {}
    for line in text.splitlines():
        version = re.search(r"Python v(\d+) unit", line)
        groups = re.findall(r"\(n = \d+: ([^)]*)\)", line)
        if not version or len(groups) != 2:
            continue
        released, gain = figures.setdefault(int(version.group(1)), ([], []))
        released += [float(v) for v in groups[0].split()]
        gain += [float(v) for v in groups[1].split()]
    load = dict(re.findall(r"^(date|commit|cores|load-before|load-after) (.*)$", text, re.M))
    return figures, load


def section(out):
    """The section's lines; [] without figures."""
    figures, load = deaths(out)
    if not figures:
        return []
    bound = re.search(r"deathBound = Duration\.milliseconds\((\d+)\)", RIG.read_text()) if RIG.exists() else None
    md = [TITLE + "\n"]
    md.append(
        "A unit written in Python from the wire protocol's documentation alone (not on `RemoteSession`: the Tests' "
        "`Fixtures/foreign-unit.py`), holding a voice session and a duck of a session served on the offline "
        "engine, SIGKILLed; each death timed from outside the host by a second Python unit connected to the same "
        "server (`Fixtures/death-watch.py`), on its own clock: from just before its `kill()` to reading the "
        "session's `unitReleased` event for the unit, and its first upward `mainGainChanged` (the restore), off "
        "its socket. Kill, kernel, the host's event loop and pool, the session, the event's way out through the "
        "server and the watcher's own read are all in it. From `Benchmarks/unit-death` (the Tests' "
        f"`ForeignUnitTests`, 20 kills per wire version a run, debug build; {load.get('date', '?')}, commit "
        f"{load.get('commit', '?')}, {load.get('cores', '?')} cores, load {load.get('load-before', '?')} before, "
        f"{load.get('load-after', '?')} after), median / worst.\n"
    )
    md.append("| unit | kills | kill → `unitReleased` read | kill → gain restore read | the tests' bound (each death) |")
    md.append("| --- | ---: | ---: | ---: | ---: |")
    for version in sorted(figures):
        released, gain = figures[version]
        md.append(
            f"| Python, wire version {version} | {len(released)} | {median(released):.2f} / {max(released):.2f} ms | "
            f"{median(gain):.2f} / {max(gain):.2f} ms | {bound.group(1) + ' ms' if bound else '?'} |"
        )
    md.append("")
    return md


def splice(out, target):
    """Replaces the section in `target` (from its title to the next `## `), or adds it before section 8."""
    lines = section(out)
    if not lines:
        sys.exit(f"no unit-death figures in {out}")
    text = Path(target).read_text()
    new = "\n".join(lines) + "\n"
    start = text.find(TITLE)
    if start < 0:
        start = end = text.find("\n## 8. ") + 1
    else:
        end = text.find("\n## ", start + len(TITLE)) + 1
    Path(target).write_text(text[:start] + new + text[end:])


if __name__ == "__main__":
    if sys.argv[1] == "--splice":
        splice(Path(sys.argv[2]), sys.argv[3])
    else:
        print("\n".join(section(Path(sys.argv[1]))))

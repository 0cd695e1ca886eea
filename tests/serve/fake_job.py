"""A stand-in for the ``nova`` job in the server tests that need many jobs fast: it records
its arguments, pid and start, waits (``NOVA_FAKE_HOLD``: until that file exists, else
``NOVA_FAKE_SECONDS``), then records its end and exits with ``NOVA_FAKE_EXIT``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def siblings() -> int:
    """The server's children alive now, this one included (read from /proc)."""
    parent, count = os.getppid(), 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        count += int(fields[1]) == parent
    return count


def main() -> int:
    out = Path(os.environ["NOVA_FAKE_DIR"])
    record = {"argv": sys.argv[1:], "pid": os.getpid(), "start": time.monotonic()}
    record["siblings"] = siblings()
    if "--repo" in sys.argv:  # testgen: the checkout the server made
        repo = sys.argv[sys.argv.index("--repo") + 1]
        head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True)
        record["repo_head"] = head.stdout.decode().strip()
    part = out / f".started-{os.getpid()}.part"
    part.write_text(json.dumps(record))
    part.rename(out / f"started-{os.getpid()}.json")  # readers never see half a record
    hold = os.environ.get("NOVA_FAKE_HOLD")
    if hold:
        while not os.path.exists(hold):
            time.sleep(0.02)
    else:
        time.sleep(float(os.environ.get("NOVA_FAKE_SECONDS", "0.05")))
    record["end"] = time.monotonic()
    with (out / "ended.jsonl").open("a") as f:
        f.write(json.dumps(record) + "\n")
    return int(os.environ.get("NOVA_FAKE_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())

"""Every relative link in the project's Markdown (README, docs/, each IP's doc/, boards/) names a file or
folder that exists in the repository: pages move (each IP keeps its docs in hw/ip/<ip>/doc/) and a
stale link is the first thing a reader of a clone meets."""
import re
import subprocess

from lsmc.paths import ROOT

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")


def markdown_files():
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / f for f in out.split()]


def test_relative_links_resolve():
    broken = []
    for page in markdown_files():
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks are not links
        for n, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    continue
                if not (page.parent / target).exists():
                    broken.append(f"{page.relative_to(ROOT)}:{n}: {target}")
    assert not broken, "broken links:\n" + "\n".join(broken)

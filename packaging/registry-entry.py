#!/usr/bin/env python3
"""server.json for one release: the repository's entry with each MCPB package's fileSha256 set
to the SHA-256 of the bundle its identifier names, found in the release folder. Refuses an entry
whose version is not the release's, or a bundle the folder does not hold.
Usage: registry-entry.py SERVER_JSON RELEASE_DIR VERSION; prints the entry."""
import hashlib
import json
import os
import sys

entry_path, folder, version = sys.argv[1:4]
entry = json.load(open(entry_path))
if entry["version"] != version:
    sys.exit(f"registry-entry.py: server.json says version {entry['version']}, the release is {version}")
for package in entry["packages"]:
    if package["registryType"] != "mcpb":
        continue
    name = package["identifier"].rsplit("/", 1)[-1]
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        sys.exit(f"registry-entry.py: server.json names {name}, which the release does not hold")
    package["fileSha256"] = hashlib.sha256(open(path, "rb").read()).hexdigest()
json.dump(entry, sys.stdout, indent=2)
print()

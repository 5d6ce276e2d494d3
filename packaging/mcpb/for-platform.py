#!/usr/bin/env python3
"""The bundle manifest for one platform's bundle: packaging/mcpb/manifest.json names every
platform a bundle may carry; a bundle carries one binary, so its manifest keeps only that
platform, its entry point and its override. Usage: for-platform.py MANIFEST PLATFORM, where
PLATFORM is linux-x86_64, linux-aarch64 or windows-x86_64; prints the manifest."""
import json
import sys

manifest_path, platform = sys.argv[1], sys.argv[2]
os_name = {"linux-x86_64": "linux", "linux-aarch64": "linux", "windows-x86_64": "win32"}.get(platform)
if os_name is None:
    sys.exit(f"for-platform.py: no bundle for {platform!r}")
manifest = json.load(open(manifest_path))
config = manifest["server"]["mcp_config"]
override = config["platform_overrides"][os_name]
binary = override["command"].removeprefix("${__dirname}/")
manifest["server"]["entry_point"] = binary
config["command"] = override["command"]
config["platform_overrides"] = {os_name: override}
manifest["compatibility"]["platforms"] = [os_name]
json.dump(manifest, sys.stdout, indent=2)
print()

#!/usr/bin/env python3
"""Checks the release's image the way a container runtime would run it, without one (these
machines refuse `podman run`): reads the archive's manifest and configuration, unpacks its
layers into a root filesystem, checks that the layers hold exactly the files the Containerfile
puts there (so no secret and nothing else), then, in a network namespace of its own, runs the
configuration's entrypoint and command as its user (chroot --userspec) with its environment plus
what an operator adds (a bearer-token file, the allowed host, the simulator), waits for the
configuration's health check to pass, and has the MCP TypeScript SDK initialize, list the tools
and call one over HTTP with the token (tests/release/http-client.mjs).

Usage: run-image.py ARCHIVE SERVER_NAME SCRATCH_DIR   (as root: chroot, unshare)"""
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKEN = "release-check-" + os.urandom(16).hex()
# every path a layer may hold: the Containerfile's COPYs and the folders they need
EXPECTED = {
    "etc", "etc/group", "etc/passwd", "etc/ssl", "etc/ssl/certs", "etc/ssl/certs/ca-certificates.crt",
    "usr", "usr/local", "usr/local/bin", "usr/local/bin/equinix-mcp",
    "var", "var/cache", "var/cache/equinix-mcp", "var/lib", "var/lib/equinix-mcp",
}


def fail(message):
    sys.exit(f"run-image.py: {message}")


def read_archive(path):
    """The image's configuration and its layers' bytes, from an oci-archive or docker-archive."""
    with tarfile.open(path) as archive:
        names = archive.getnames()

        def blob(name):
            return archive.extractfile(name).read()

        if "index.json" in names:
            index = json.loads(blob("index.json"))
            digest = index["manifests"][0]["digest"].replace(":", "/")
            manifest = json.loads(blob(f"blobs/{digest}"))
            config = json.loads(blob("blobs/" + manifest["config"]["digest"].replace(":", "/")))
            layers = [blob("blobs/" + layer["digest"].replace(":", "/")) for layer in manifest["layers"]]
        else:
            manifest = json.loads(blob("manifest.json"))[0]
            config = json.loads(blob(manifest["Config"]))
            layers = [blob(layer) for layer in manifest["Layers"]]
    return config, [gzip.decompress(layer) if layer[:2] == b"\x1f\x8b" else layer for layer in layers]


def unpack(layers, rootfs):
    seen = set()
    for layer in layers:
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            for member in tar.getmembers():
                name = member.name.lstrip("./").rstrip("/")
                if name:
                    seen.add(name)
            tar.extractall(rootfs, numeric_owner=True, filter="fully_trusted")
    return seen


def check_config(config, server_name):
    c = config["config"]
    user = c.get("User", "")
    uid = user.split(":")[0]
    if uid in ("", "0", "root"):
        fail(f"the image runs as {user or 'root'}: it must name a non-root user")
    label = (c.get("Labels") or {}).get("io.modelcontextprotocol.server.name")
    if label != server_name:
        fail(f"the label io.modelcontextprotocol.server.name is {label!r}, server.json's name is {server_name!r}")
    if "8931/tcp" not in (c.get("ExposedPorts") or {}):
        fail(f"the image exposes {c.get('ExposedPorts')}, not 8931/tcp")
    env = dict(e.split("=", 1) for e in c.get("Env") or [])
    if env.get("EQUINIX_MCP_LISTEN") != "0.0.0.0:8931" or env.get("EQUINIX_MCP_TRANSPORT") != "http":
        fail(f"the image's environment does not serve HTTP on 0.0.0.0:8931: {env}")
    for name in env:
        if any(word in name for word in ("SECRET", "TOKEN", "PASSWORD", "CLIENTID")):
            fail(f"the image's environment sets {name}: credentials are given at run time, never built in")
    health = (c.get("Healthcheck") or {}).get("Test") or []
    if health[:1] != ["CMD"] or "healthcheck" not in health:
        fail(f"the image's health check is {health}, not the binary's healthcheck")
    return c, env, health[1:]


def inside(rootfs, user, argv, env):
    """argv run in the image's root filesystem as its user, with exactly env."""
    return ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + ["chroot", f"--userspec={user}", rootfs] + argv


def main():
    archive, server_name, scratch = sys.argv[1:4]
    if os.environ.get("RUN_IMAGE_IN_NETNS") != "1":
        # a network namespace of its own: the image's fixed port 8931 is free there, and nothing
        # it does reaches past its loopback
        env = dict(os.environ, RUN_IMAGE_IN_NETNS="1")
        script = 'ip link set lo up && exec "$@"'
        code = subprocess.call(["unshare", "--net", "sh", "-c", script, "sh", sys.executable, *sys.argv], env=env)
        sys.exit(code)

    config, layers = read_archive(archive)
    c, env, health = check_config(config, server_name)
    rootfs = os.path.join(scratch, "rootfs")
    os.makedirs(rootfs)
    seen = unpack(layers, rootfs)
    if seen != EXPECTED:
        fail(f"the layers hold {sorted(seen - EXPECTED)} beyond the Containerfile's files, and lack {sorted(EXPECTED - seen)}")
    uid, gid = (int(x) for x in c["User"].split(":"))
    for folder in ("var/lib/equinix-mcp", "var/cache/equinix-mcp"):
        st = os.stat(os.path.join(rootfs, folder))
        if (st.st_uid, st.st_gid) != (uid, gid):
            fail(f"/{folder} belongs to {st.st_uid}:{st.st_gid}, not the image's user {uid}:{gid}")

    # what an operator adds when running it: a token file (a mounted secret), the name clients
    # use, and here the simulator instead of Equinix credentials
    secrets = os.path.join(rootfs, "run/secrets")
    os.makedirs(secrets)
    tokens = os.path.join(secrets, "tokens")
    with open(tokens, "w") as f:
        f.write(f"release-check {TOKEN}\n")
    os.chown(tokens, uid, gid)
    os.chmod(tokens, 0o600)
    run_env = dict(env)
    run_env.update({
        "EQUINIX_MCP_AUTH_TOKEN_FILE": "/run/secrets/tokens",
        "EQUINIX_MCP_ALLOWED_HOSTS": "mcp.example.internal",
        "EQUINIX_MCP_FABRIC_SIM": "1",
    })
    argv = (c.get("Entrypoint") or []) + (c.get("Cmd") or [])
    log = open(os.path.join(scratch, "server.log"), "w+")
    server = subprocess.Popen(inside(rootfs, c["User"], argv, run_env), stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                log.seek(0)
                fail(f"the entrypoint exited with {server.returncode}:\n{log.read()}")
            probe = subprocess.run(inside(rootfs, c["User"], health, env), capture_output=True, text=True)
            if probe.returncode == 0:
                break
            if time.monotonic() > deadline:
                fail(f"the health check never passed: {probe.stderr}")
            time.sleep(0.5)
        client = os.path.join(REPO, "tests/release/http-client.mjs")
        subprocess.run([os.path.join(REPO, ".ci/with-node"), "node", client, "http://127.0.0.1:8931/mcp", TOKEN], check=True)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=40)
        except subprocess.TimeoutExpired:
            server.kill()
            fail("the server did not stop within 40 s of SIGTERM")
    if code != 0:
        log.seek(0)
        fail(f"the server exited with {code} after SIGTERM:\n{log.read()}")
    log.seek(0)
    if TOKEN in log.read():
        fail("the server's log shows the bearer token")
    print(f"image: {len(seen)} paths, user {c['User']}, health check and MCP over HTTP passed")


main()

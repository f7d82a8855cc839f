#!/usr/bin/env python3
"""`make test`'s runner: every test of the workspace, and clippy, in the time
the CLI tests alone take.

On a 2-core machine `cargo test` runs its test binaries one after another,
and the CLI tests' binary (tests/cli: real namespaces, servers, Chromium)
is most of the run; its tests mostly wait (emulated links, timeouts,
children), so the CPU is half idle while it runs. This script builds the
tests once (`cargo test --no-run`), starts the CLI binary, and meanwhile runs
every other test binary (one after another, as cargo would), the doc-tests,
and clippy at the lowest CPU priority (`nice -n 19`: it takes only what the
tests leave; it shares the build's profile, so its build scripts and proc
macros are the build's). The CLI binary's output is printed whole when it
ends. Each binary runs as `cargo test` runs it: in its package's directory,
with cargo's environment for it. The exit status is 1 if anything failed
(a test, a binary, clippy), naming each.

Usage: scripts/test.py PROFILE CLI_THREADS   (the Makefile: fast-build 4)
No third-party modules (plain Python 3).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

CARGO = os.environ.get("CARGO", "cargo")


def build(profile):
    """Builds every test target; [(package dir, package name, target name, executable)]."""
    cmd = [CARGO, "test", "--profile", profile, "--locked", "--workspace", "--no-run",
           "--message-format", "json-render-diagnostics"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"test.py: {' '.join(cmd)} failed ({out.returncode})")
    found = []
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg["profile"]["test"]:
            continue  # the spdylab binary itself
        manifest = msg["manifest_path"]
        package = msg["package_id"]
        name = msg["target"]["name"]
        found.append((os.path.dirname(manifest), package, name, msg["executable"]))
    return found


def package_name(package_id):
    """The name in a package id: `path+file:///…/crates/lab#0.1.0` → lab."""
    tail = package_id.rsplit("/", 1)[-1]
    return tail.split("#")[0].split("@")[0]


def env_for(directory, package_id):
    """Cargo's run-time environment of a test binary of this package."""
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = directory
    env["CARGO_PKG_NAME"] = package_name(package_id)
    env.setdefault("CARGO", CARGO)
    return env


def main():
    profile, threads = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    binaries = build(profile)
    cli = [b for b in binaries if b[2] == "cli"]
    rest = [b for b in binaries if b[2] != "cli"]
    failed = []
    log = tempfile.NamedTemporaryFile(prefix="spdylab-cli-tests-", suffix=".log", delete=False)
    background = None
    for directory, package, name, exe in cli:
        print(f"test.py: {name} ({package_name(package)}) started, {threads} threads; "
              f"its output when it ends", flush=True)
        background = (name, subprocess.Popen([exe, "--test-threads", threads],
                                             cwd=directory, env=env_for(directory, package),
                                             stdout=log, stderr=subprocess.STDOUT))
    for directory, package, name, exe in rest:
        print(f"     Running {name} ({package_name(package)}: {os.path.basename(exe)})", flush=True)
        code = subprocess.run([exe], cwd=directory, env=env_for(directory, package)).returncode
        if code != 0:
            failed.append(f"{package_name(package)} {name} (exit {code})")
    print("     Doc-tests", flush=True)
    doc = [CARGO, "test", "--profile", profile, "--locked", "--workspace", "--doc"]
    if subprocess.run(doc).returncode != 0:
        failed.append("doc-tests")
    print("     Clippy (nice 19, beside the CLI tests)", flush=True)
    lint = ["nice", "-n", "19", CARGO, "clippy", "--profile", profile, "--locked",
            "--all-targets", "--", "-D", "warnings"]
    if subprocess.run(lint).returncode != 0:
        failed.append("clippy")
    if background:
        name, proc = background
        code = proc.wait()
        log.close()
        print(f"     Running {name} (the CLI tests):", flush=True)
        with open(log.name) as f:
            sys.stdout.write(f.read())
        os.unlink(log.name)
        if code != 0:
            failed.append(f"{name} (exit {code})")
    elapsed = time.monotonic() - started
    if failed:
        print(f"test.py: FAILED after {elapsed:.0f} s: " + "; ".join(failed), flush=True)
        sys.exit(1)
    print(f"test.py: every test binary, the doc-tests and clippy passed in {elapsed:.0f} s")


if __name__ == "__main__":
    main()

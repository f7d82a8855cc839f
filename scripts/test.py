#!/usr/bin/env python3
"""`make test`'s runner: every test of the workspace, and clippy, in about
the time the CLI tests alone take.

On a 2-core machine `cargo test` builds every test, then runs its test
binaries one after another, and the CLI tests' binary (tests/cli: real
namespaces, servers, Chromium) is most of the run; its tests mostly wait
(emulated links, timeouts, children), so the CPU is half idle while they
run. This script builds the CLI tests' binary first (`cargo test --test
cli --no-run`: the same features as the whole workspace's build, so nothing
is built twice) and starts it; meanwhile, at the lowest CPU priority (`nice
-n 19`: they take only what the tests leave), it builds every other test,
then runs each of those binaries in turn while the doc-tests and clippy run
beside them (clippy in the same profile: its build scripts and proc macros
are the build's). Each binary's output is printed whole when it ends, the
CLI binary's last. Each binary runs as `cargo test` runs it: in its
package's directory, with cargo's environment for it. The exit status is 1
if anything failed (a build, a test, clippy), naming each. On this machine
`.ci/run` took 14 min 58 s so, 20 min 52 s with `cargo test --release`.

Usage: scripts/test.py PROFILE CLI_THREADS   (the Makefile: fast-build 4)
No third-party modules (plain Python 3).
"""

import json
import sys as _sys
if _sys.argv[1:2] in (['-h'], ['--help']):
    print(__doc__.strip())
    _sys.exit(0)
import os
import subprocess
import sys
import tempfile
import threading
import time

CARGO = os.environ.get("CARGO", "cargo")


def build(profile, only=None, nice=False):
    """Builds the test targets (`only`: that one); [(package dir, package id,
    target name, executable)], or None if the build failed."""
    cmd = [CARGO, "test", "--profile", profile, "--locked", "--workspace", "--no-run",
           "--message-format", "json-render-diagnostics"]
    if only:
        cmd += ["--test", only]
    if nice:
        cmd = ["nice", "-n", "19"] + cmd
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        print(f"test.py: {' '.join(cmd)} failed ({out.returncode})", flush=True)
        return None
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


def run_binaries(binaries, failed):
    """Runs each test binary in turn, printing its output whole as it ends."""
    for directory, package, name, exe in binaries:
        run = subprocess.run([exe], cwd=directory, env=env_for(directory, package),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(f"     Running {name} ({package_name(package)}: "
                         f"{os.path.basename(exe)})\n{run.stdout}")
        sys.stdout.flush()
        if run.returncode != 0:
            failed.append(f"{package_name(package)} {name} (exit {run.returncode})")


def main():
    profile, threads = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    cli = build(profile, only="cli")
    if cli is None:
        sys.exit(1)
    failed = []
    log = tempfile.NamedTemporaryFile(prefix="spdylab-cli-tests-", suffix=".log", delete=False)
    background = []
    for directory, package, name, exe in cli:
        print(f"test.py: {name} ({package_name(package)}) started, {threads} threads, "
              f"{time.monotonic() - started:.0f} s in; its output when it ends", flush=True)
        background.append((name, subprocess.Popen(
            [exe, "--test-threads", threads], cwd=directory, env=env_for(directory, package),
            stdout=log, stderr=subprocess.STDOUT)))
    rest = build(profile, nice=True)
    if rest is None:
        failed.append("the build of the other tests")
    # The other test binaries (mostly waiting: real servers, peers) in one
    # thread, their output printed as each ends; the doc-tests and clippy
    # (CPU, and cargo's lock) beside them.
    cli_exes = {exe for *_, exe in cli}
    others = [b for b in rest or [] if b[3] not in cli_exes]
    binaries = threading.Thread(target=run_binaries, args=(others, failed))
    binaries.start()
    doc = ["nice", "-n", "19", CARGO, "test", "--profile", profile, "--locked", "--workspace",
           "--doc"]
    run = subprocess.run(doc, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        failed.append("doc-tests")
    print("     Clippy", flush=True)
    lint = ["nice", "-n", "19", CARGO, "clippy", "--profile", profile, "--locked",
            "--all-targets", "--", "-D", "warnings"]
    if subprocess.run(lint).returncode != 0:
        failed.append("clippy")
    binaries.join()
    print(f"test.py: all but the CLI tests done, {time.monotonic() - started:.0f} s in", flush=True)
    for name, proc in background:
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

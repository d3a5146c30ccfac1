"""Faults on a user's cluster through a command the user supplies: `--fault-hook CMD`.

The suite cannot stop a broker or move a leader on a cluster it does not manage, but the user's CI often
can (docker compose, kubectl, kafka-leader-election.sh after a reassignment). The suite runs

    CMD move-leader TOPIC PARTITION BROKER_ID

(CMD split like a shell would, no shell involved) and expects exit code 0 once BROKER_ID leads the
partition; the adapter then waits, bounded, until Metadata shows it. A hook that fails or runs past its
timeout fails the operation with its output, never a hang. Only with `--allow-disruptive`
(docs/running.md: a cluster the suite did not start is never disrupted without it).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass

from conformance.errors import TargetError

HOOK_TIMEOUT = 120.0


class FaultHookError(RuntimeError):
    """The fault hook could not run or reported failure; the message names the command and its output."""


def check_fault_options(target: str, fault_hook: str | None, allow_disruptive: bool) -> None:
    """A fault hook only for --target broker, only with --allow-disruptive, and only if it can run."""

    if fault_hook is None:
        return
    if target != "broker":
        raise TargetError(f"--fault-hook is for --target broker; target {target!r} moves its own leaders or has none")
    if not allow_disruptive:
        raise TargetError(
            "--fault-hook moves partition leaders on your cluster: add --allow-disruptive "
            "(or KTS_ALLOW_DISRUPTIVE=1) to allow it"
        )
    check_fault_hook(fault_hook)


def check_fault_hook(command: str) -> None:
    """Reject a hook that cannot run at all before anything starts (a usage error, one line)."""

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise TargetError(f"--fault-hook {command!r} does not parse as a command line ({exc})") from None
    if not argv:
        raise TargetError("--fault-hook is empty: pass a command, e.g. --fault-hook ./move-leader.sh")
    if shutil.which(argv[0]) is None:
        raise TargetError(f"--fault-hook: {argv[0]!r} is not an executable file or a command on PATH")


@dataclass(frozen=True)
class FaultHook:
    """A picklable handle on the user's command (the Spark engine builds adapters inside tasks)."""

    command: str
    timeout: float = HOOK_TIMEOUT

    def move_leader(self, topic: str, partition: int, broker_id: int) -> None:
        argv = [*shlex.split(self.command), "move-leader", topic, str(partition), str(broker_id)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise FaultHookError(f"fault hook {shlex.join(argv)} ran past {self.timeout:.0f} s") from None
        except OSError as exc:
            raise FaultHookError(f"fault hook {shlex.join(argv)} could not start: {exc}") from None
        if done.returncode != 0:
            output = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise FaultHookError(
                f"fault hook {shlex.join(argv)} exited with {done.returncode}: " + " | ".join(output)
            )

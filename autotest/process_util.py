"""Waiting for a tool process to reach a test pause point (ZARR3_TEST_PAUSE_AT): the process creates
the file ZARR3_TEST_PAUSE_MARK as it starts its pause, so a test never guesses how long the process
takes to get there (a loaded machine or the ASan runtime makes every guess wrong some day)."""
import time


def wait_for_pause(proc, mark, timeout=60.0):
    """Returns once `mark` exists; fails if `proc` ends first or `timeout` seconds pass."""
    end = time.monotonic() + timeout
    while not mark.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the process ended before its pause point: {out}{err}")
        assert time.monotonic() < end, f"the process did not reach its pause point in {timeout} s"
        time.sleep(0.02)

"""What every bench shares: its scratch directory, and the summary it prints (a median with its
interquartile range)."""
import os
import statistics
import tempfile


def workdir(prefix):
    """A fresh scratch directory that the daemons' unprivileged users can write too."""
    work = tempfile.mkdtemp(prefix=prefix)
    os.chmod(work, 0o777)
    return work


def quartiles(xs):
    """(lower quartile, median, upper quartile); with under four values, (min, median, max)."""
    xs = sorted(xs)
    if len(xs) < 4:
        return xs[0], statistics.median(xs), xs[-1]
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def publish(lines, out):
    """Writes a bench's page (docs/*.md) and prints it."""
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))

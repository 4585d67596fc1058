"""The summary every bench prints: a median with its interquartile range."""
import statistics


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

#!/usr/bin/python3
"""Builds tracer's price table (docs/cost.md has the format) from:
  --karpenter FILE   a two-column `instance_type usd_per_hour` list (the bundled
                     source: Karpenter's generated on-demand table), with --region;
  --aws-bulk FILE    the AWS Price List bulk JSON for one region (on-demand, Linux,
                     shared tenancy, no pre-installed software), which carries
                     vcpu and memory itself;
  --spot FILE        `aws ec2 describe-spot-price-history --output json` output
                     (Linux/UNIX), newest price per type and AZ, averaged over AZs.
Writes the table to stdout."""
import argparse
import json
import re
import sys
from datetime import datetime, timezone

from specs import arch, spec


def karpenter_rows(path, region):
    source = ""
    for line in open(path):
        if line.startswith("# Source:"):
            source = line[len("# Source:"):].strip() + "; vcpu and memory by AWS naming rules (deploy/prices/specs.py)"
        if line.startswith("#") or not line.strip():
            continue
        itype, price = line.split()
        v, m, cls = spec(itype)
        yield ("aws", region, itype, "on-demand", float(price), v, m, cls, arch(itype)), source


def bulk_rows(path):
    doc = json.load(open(path))
    products = doc.get("products", {})
    terms = doc.get("terms", {}).get("OnDemand", {})
    for sku, p in products.items():
        a = p.get("attributes", {})
        if (p.get("productFamily") != "Compute Instance" or a.get("operatingSystem") != "Linux"
                or a.get("tenancy") != "Shared" or a.get("preInstalledSw") != "NA"
                or a.get("capacitystatus") != "Used"):
            continue
        prices = [float(d["pricePerUnit"]["USD"]) for t in terms.get(sku, {}).values()
                  for d in t.get("priceDimensions", {}).values() if d.get("unit") == "Hrs"]
        if not prices or prices[0] <= 0:
            continue
        mem = float(re.sub(r"[^0-9.]", "", a["memory"].replace(",", "")))
        itype = a["instanceType"]
        cls = {"c": "compute", "m": "general", "r": "memory", "t": "burstable"}.get(itype[0], "other")
        if itype[0] in "gp":
            cls = "gpu"
        cpu_arch = "arm64" if "Graviton" in a.get("physicalProcessor", "") else arch(itype)
        yield ("aws", a["regionCode"], itype, "on-demand", prices[0], int(a["vcpu"]), mem, cls,
               cpu_arch), \
            f"AWS Price List bulk JSON, publicationDate {doc.get('publicationDate', '?')}"


def spot_rows(path, region, known):
    doc = json.load(open(path))
    latest = {}
    for h in doc.get("SpotPriceHistory", []):
        if not h.get("ProductDescription", "").startswith("Linux/UNIX"):
            continue
        key = (h["InstanceType"], h["AvailabilityZone"])
        if key not in latest or h["Timestamp"] > latest[key][0]:
            latest[key] = (h["Timestamp"], float(h["SpotPrice"]))
    by_type = {}
    for (itype, _), (_, price) in latest.items():
        by_type.setdefault(itype, []).append(price)
    for itype, prices in sorted(by_type.items()):
        if itype not in known:
            continue
        v, m, cls, cpu_arch = known[itype]
        yield ("aws", region, itype, "spot", sum(prices) / len(prices), v, m, cls, cpu_arch), \
            "EC2 DescribeSpotPriceHistory, mean of the newest price per availability zone"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--karpenter")
    ap.add_argument("--aws-bulk")
    ap.add_argument("--spot")
    ap.add_argument("--region", default="us-east-1")
    args = ap.parse_args()
    rows, sources = [], set()
    if args.karpenter:
        for row, src in karpenter_rows(args.karpenter, args.region):
            rows.append(row)
            sources.add(src)
    if args.aws_bulk:
        for row, src in bulk_rows(args.aws_bulk):
            rows.append(row)
            sources.add(src)
    if args.spot:
        known = {r[2]: (r[5], r[6], r[7], r[8]) for r in rows}
        for row, src in spot_rows(args.spot, args.region, known):
            rows.append(row)
            sources.add(src)
    if not rows:
        sys.exit("build_table.py: no input (--karpenter, --aws-bulk or --spot)")
    out = sys.stdout
    out.write("# tracer price table, format 2 (docs/cost.md)\n")
    for s in sorted(sources):
        out.write(f"# source: {s}\n")
    out.write(f"# built: {datetime.now(timezone.utc).strftime('%Y-%m-%d')} by deploy/prices/build_table.py\n")
    out.write("# provider\tregion\tinstance_type\tlifecycle\tusd_per_hour\tvcpu\tmemory_gib\tclass\tarch\n")
    for r in sorted(rows, key=lambda r: (r[1], r[3], r[2])):
        out.write("\t".join([r[0], r[1], r[2], r[3], f"{r[4]:.6g}", str(r[5]), f"{r[6]:g}", r[7], r[8]]) + "\n")


if __name__ == "__main__":
    main()

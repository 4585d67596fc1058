#!/usr/bin/python3
"""The price-table builder against small inputs in the real formats: the AWS Price
List bulk JSON (on-demand) and DescribeSpotPriceHistory output (spot)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "..", "..", "deploy", "prices", "build_table.py")
sys.path.insert(0, os.path.join(HERE, "..", "..", "deploy", "prices"))
from specs import arch, spec  # noqa: E402

BULK = {
    "formatVersion": "v1.0", "offerCode": "AmazonEC2", "publicationDate": "2026-01-01T00:00:00Z",
    "products": {
        "SKU1": {"sku": "SKU1", "productFamily": "Compute Instance", "attributes": {
            "instanceType": "m5.large", "vcpu": "2", "memory": "8 GiB", "operatingSystem": "Linux",
            "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "regionCode": "eu-west-1"}},
        "SKU2": {"sku": "SKU2", "productFamily": "Compute Instance", "attributes": {
            "instanceType": "m5.large", "vcpu": "2", "memory": "8 GiB", "operatingSystem": "Windows",
            "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "regionCode": "eu-west-1"}},
        "SKU4": {"sku": "SKU4", "productFamily": "Compute Instance", "attributes": {
            "instanceType": "m7g.large", "vcpu": "2", "memory": "8 GiB", "operatingSystem": "Linux",
            "physicalProcessor": "AWS Graviton3 Processor",
            "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "regionCode": "eu-west-1"}},
        "SKU3": {"sku": "SKU3", "productFamily": "Compute Instance", "attributes": {
            "instanceType": "r6i.2xlarge", "vcpu": "8", "memory": "64 GiB", "operatingSystem": "Linux",
            "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "regionCode": "eu-west-1"}},
    },
    "terms": {"OnDemand": {
        "SKU1": {"SKU1.JRTCKXETXF": {"priceDimensions": {"SKU1.JRTCKXETXF.6YS6EN2CT7": {
            "unit": "Hrs", "pricePerUnit": {"USD": "0.1070000000"}}}}},
        "SKU2": {"SKU2.JRTCKXETXF": {"priceDimensions": {"x": {"unit": "Hrs", "pricePerUnit": {"USD": "0.2"}}}}},
        "SKU4": {"SKU4.JRTCKXETXF": {"priceDimensions": {"x": {"unit": "Hrs", "pricePerUnit": {"USD": "0.0816"}}}}},
        "SKU3": {"SKU3.JRTCKXETXF": {"priceDimensions": {"x": {"unit": "Hrs", "pricePerUnit": {"USD": "0.5640000000"}}}}},
    }},
}
SPOT = {"SpotPriceHistory": [
    {"AvailabilityZone": "eu-west-1a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX",
     "SpotPrice": "0.040000", "Timestamp": "2026-01-01T10:00:00Z"},
    {"AvailabilityZone": "eu-west-1a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX",
     "SpotPrice": "0.030000", "Timestamp": "2026-01-01T09:00:00Z"},
    {"AvailabilityZone": "eu-west-1b", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX",
     "SpotPrice": "0.050000", "Timestamp": "2026-01-01T10:00:00Z"},
    {"AvailabilityZone": "eu-west-1b", "InstanceType": "m5.large", "ProductDescription": "Windows",
     "SpotPrice": "0.090000", "Timestamp": "2026-01-01T11:00:00Z"},
]}


class BuildTable(unittest.TestCase):
    def rows(self, *args):
        out = subprocess.run([sys.executable, BUILD, *args], check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines() if not line.startswith("#")], out

    def test_bulk_and_spot(self):
        with tempfile.TemporaryDirectory() as d:
            bulk, spot = os.path.join(d, "bulk.json"), os.path.join(d, "spot.json")
            for path, doc in ((bulk, BULK), (spot, SPOT)):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
            rows, text = self.rows("--aws-bulk", bulk, "--spot", spot, "--region", "eu-west-1")
        self.assertIn("publicationDate 2026-01-01", text)
        by = {(r[2], r[3]): r for r in rows}
        self.assertEqual(sorted(by), [("m5.large", "on-demand"), ("m5.large", "spot"), ("m7g.large", "on-demand"),
                                      ("r6i.2xlarge", "on-demand")])
        self.assertEqual(by[("m5.large", "on-demand")][4:], ["0.107", "2", "8", "general", "x86_64"])
        self.assertEqual(by[("r6i.2xlarge", "on-demand")][4:], ["0.564", "8", "64", "memory", "x86_64"])
        # The bulk JSON names the processor: a Graviton row is arm64 whatever its name.
        self.assertEqual(by[("m7g.large", "on-demand")][8], "arm64")
        self.assertEqual(by[("m5.large", "spot")][8], "x86_64")
        # Newest Linux price per zone (0.04 and 0.05), averaged: 0.045.
        self.assertEqual(by[("m5.large", "spot")][4], "0.045")

    def test_naming_rules(self):
        self.assertEqual(spec("c6i.4xlarge"), (16, 32, "compute"))
        self.assertEqual(spec("m7g.medium"), (1, 4, "general"))
        self.assertEqual(spec("r5.24xlarge"), (96, 768, "memory"))
        self.assertEqual(spec("t3.micro"), (2, 1, "burstable"))
        self.assertEqual(spec("p5.48xlarge")[2], "gpu")

    def test_architecture_rules(self):
        for t in ("c7g.large", "m6gd.xlarge", "r8g.large", "t4g.micro", "im4gn.large", "is4gen.large",
                  "x2gd.large", "g5g.xlarge", "a1.large", "c7gn.medium"):
            self.assertEqual(arch(t), "arm64", t)
        for t in ("c5.large", "m5.large", "g4dn.xlarge", "m7i.large", "r6a.large", "i4i.large", "p5.48xlarge",
                  "m5dn.large", "c6in.large"):
            self.assertEqual(arch(t), "x86_64", t)

    def test_bundled_table_is_current(self):
        bundled = os.path.join(HERE, "..", "..", "deploy", "etc", "prices.tsv")
        with open(bundled, encoding="utf-8") as f:
            rows = [line.split("\t") for line in f if not line.startswith("#")]
        self.assertGreater(len(rows), 100)
        for r in rows:
            self.assertEqual(len(r), 9, r)
            self.assertIn(r[8].strip(), ("x86_64", "arm64"), r)
            self.assertGreater(float(r[4]), 0)
        m5 = [r for r in rows if r[2] == "m5.large"][0]
        self.assertEqual((m5[4], m5[5], m5[6]), ("0.096", "2", "8"))


if __name__ == "__main__":
    unittest.main()

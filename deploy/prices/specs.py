"""vCPU and memory of EC2 instance types, by AWS's naming rules, for price
tables whose source lists only prices (the bundled table). Tables built from
the AWS Price List bulk JSON take vcpu and memory from the JSON instead.

Rules (AWS instance type documentation): size medium = 1 vCPU (t3: 2),
large = 2, xlarge = 4, Nxlarge = 4N. Memory per vCPU by family: c 2 GiB,
m 4 GiB, r 8 GiB, i4i 8 GiB, g4dn/g5 4 GiB (their 1-GPU sizes). t3 sizes are
listed. GPU p-families are irregular and listed from AWS's published specs;
recommendations never pick GPU types (tracer does not measure GPUs).

Architecture: AWS Graviton (arm64) types carry a "g" right after the
generation digit (c7g, m6gd, r8g, t4g, im4gn, is4gen, x2gd, g5g); a1 is the
first Graviton. Every other type here is x86_64."""
import re

T3 = {"nano": (2, 0.5), "micro": (2, 1), "small": (2, 2), "medium": (2, 4), "large": (2, 8),
      "xlarge": (4, 16), "2xlarge": (8, 32)}
GPU = {"p3.2xlarge": (8, 61), "p4d.24xlarge": (96, 1152), "p5.48xlarge": (192, 2048)}
PER_VCPU = {"c": 2, "m": 4, "r": 8}
SPECIAL_PER_VCPU = {"i4i": 8, "g4dn": 4, "g5": 4}


def vcpus(size):
    if size == "medium":
        return 1
    if size == "large":
        return 2
    if size == "xlarge":
        return 4
    if size.endswith("xlarge") and size[:-6].isdigit():
        return 4 * int(size[:-6])
    raise ValueError(f"unknown size {size}")


def spec(instance_type):
    """(vcpu, memory GiB, class) where class is compute, general, memory, storage, gpu, burstable."""
    family, size = instance_type.split(".", 1)
    if instance_type in GPU:
        v, m = GPU[instance_type]
        return v, m, "gpu"
    if family == "t3":
        v, m = T3[size]
        return v, m, "burstable"
    if family in SPECIAL_PER_VCPU:
        v = vcpus(size)
        return v, v * SPECIAL_PER_VCPU[family], "gpu" if family.startswith("g") else "storage"
    letter = family[0]
    if letter not in PER_VCPU:
        raise ValueError(f"unknown family {family}")
    v = vcpus(size)
    return v, v * PER_VCPU[letter], {"c": "compute", "m": "general", "r": "memory"}[letter]


def arch(instance_type):
    """"arm64" for Graviton types, "x86_64" for the rest (the rule above)."""
    family = instance_type.split(".", 1)[0]
    if family == "a1":
        return "arm64"
    m = re.fullmatch(r"([a-z]+)(\d+)([a-z-]*)", family)
    return "arm64" if m and m.group(3).startswith("g") else "x86_64"

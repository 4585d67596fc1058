#!/bin/bash
# The demo workload: a small read-alignment and variant-calling pipeline on a
# genome and reads it generates itself (no downloads). Real tools from Debian:
# awk, bwa, samtools, bcftools, sort, gzip.
set -euo pipefail

work=${1:?usage: pipeline.sh WORKDIR}
mkdir -p "$work"
cd "$work"

echo "[1/7] reference genome (400 kb, fixed seed)"
awk 'BEGIN { srand(42); print ">chr1";
	for (i = 0; i < 5000; i++) { s = ""; for (j = 0; j < 80; j++) s = s substr("ACGT", int(rand() * 4) + 1, 1); print s } }' > ref.fa

echo "[2/7] reads: 60k x 100 bp with a known SNP every 2 kb"
awk 'BEGIN { srand(7) }
	/^>/ { next } { seq = seq $0 }
	END {
		n = length(seq)
		for (p = 1000; p < n; p += 2000) { b = substr(seq, p, 1); alt = (b == "A") ? "G" : "A"; seq = substr(seq, 1, p - 1) alt substr(seq, p + 1) }
		q = ""; for (k = 0; k < 100; k++) q = q "I"
		for (r = 0; r < 60000; r++) {
			start = int(rand() * (n - 100)) + 1
			printf "@read%d\n%s\n+\n%s\n", r, substr(seq, start, 100), q
		}
	}' ref.fa > reads.fq

echo "[3/7] index the reference"
samtools faidx ref.fa
bwa index ref.fa 2> bwa-index.log

echo "[4/7] align"
bwa mem -t 2 ref.fa reads.fq 2> bwa-mem.log > aln.sam

echo "[5/7] sort and index"
samtools sort -@ 2 -o aln.bam aln.sam 2> /dev/null
samtools index aln.bam
rm aln.sam

echo "[6/7] call variants"
bcftools mpileup -f ref.fa aln.bam 2> /dev/null | bcftools call -mv -Oz -o calls.vcf.gz 2> /dev/null
bcftools index calls.vcf.gz

echo "[7/7] summarise"
samtools flagstat aln.bam > flagstat.txt
samtools depth aln.bam > depth.txt
sort -k3,3nr depth.txt > depth.sorted.txt
head -3 depth.sorted.txt > top_depth.txt
gzip -f reads.fq
echo "variants called: $(bcftools view -H calls.vcf.gz | wc -l) (planted: ~200)"

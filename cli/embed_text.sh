#!/bin/sh
# Turns a text file into a C string constant: embed_text.sh NAME FILE > out.c
set -eu
echo "/* Generated from $2 by cli/embed_text.sh. */"
printf 'const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$2"
echo ";"

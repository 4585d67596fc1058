#!/bin/sh
# Turns the numbered migration files into a C array, in order.
set -eu
echo "/* Generated from the aggregator/schema migration files by embed.sh. */"
echo "#include \"aggregator/store/schema.h\""
echo "const struct migration schema_migrations[] = {"
for f in "$@"; do
	version=$(basename "$f" | sed 's/^0*\([0-9][0-9]*\)_.*/\1/')
	printf '\t{%s, "%s",\n' "$version" "$(basename "$f")"
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t "/' -e 's/$/\\n"/' "$f"
	printf '\t},\n'
done
echo "};"
echo "const unsigned schema_migration_count = sizeof(schema_migrations) / sizeof(schema_migrations[0]);"

/*
 * Settings files (INI): one spelling rule for keys and one list of the
 * sections tracer's programs read, so every program rejects the same typos.
 */
#ifndef TRACER_CONFKEY_H
#define TRACER_CONFKEY_H

#include <stdbool.h>

/* Keys are spelt as the command-line options; '-' and '_' are the same. */
bool config_key_is(const char *name, const char *key);

/*
 * Why a section is not one a program reads, or NULL when it is: a key
 * outside any section, or a section no tracer program knows (a typo; one
 * file may hold several programs' sections). mine lists the program's own
 * sections, NULL-terminated; *is_mine says whether it is one of them.
 */
const char *config_section_check(const char *section, const char *const *mine, bool *is_mine);

#endif

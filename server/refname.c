/* refname.c - see refname.h. */
#include "refname.h"

#include <ctype.h>
#include <string.h>

bool api_tree_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 64 || !isalnum((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

bool api_git_ref_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 255 || s[0] == '-')
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return true;
}

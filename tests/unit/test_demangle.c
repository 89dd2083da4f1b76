/* Function names as a reader knows them (src/calls/demangle.c): one row per symbol, the name
 * `c++filt -i` gives it, NULL where the symbol is shown as it is. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "calls/calls.h"

START_TEST(test_demangle_table)
{
	static const struct {
		const char *symbol, *want;
	} rows[] = {
	    {"_ZN6Parser4exprERj", "Parser::expr(unsigned int&)"},
	    {"_ZNK6shapes6Circle4areaEi", "shapes::Circle::area(int) const"},
	    {"_ZL5printj", "print(unsigned int)"},
	    {"_Z1fSs", "f(std::string)"}, /* std:: abbreviations kept, as c++filt -i */
	    {"_ZNSt6vectorIiSaIiEE9push_backERKi",
	     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
	    {"_Z3fooi.constprop.0", "foo(int) [clone .constprop.0]"},
	    {"_ZN1AC2Ev", "A::A()"},
	    {"main", NULL},   /* C */
	    {"i", NULL},      /* a type's code, not a function's name */
	    {"_Z", NULL},     /* mangled prefix, nothing after */
	    {"_Zjunk", NULL}, /* unreadable: shown as it is */
	    {"", NULL},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *got = tm_demangle(rows[i].symbol);
		if (rows[i].want)
			ck_assert_msg(got && strcmp(got, rows[i].want) == 0, "%s: %s, not %s",
				      rows[i].symbol, got ? got : "(none)", rows[i].want);
		else
			ck_assert_msg(!got, "%s: %s, not shown as it is", rows[i].symbol, got);
		free(got);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("demangle");
	tcase_add_test(tc, test_demangle_table);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

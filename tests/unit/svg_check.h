/* What the unit tests of the pictures (plots/, calls/flamegraph.svg) check of an SVG. */
#ifndef TRACEMOUNT_TESTS_SVG_CHECK_H
#define TRACEMOUNT_TESTS_SVG_CHECK_H

/* Writes svg to a file and asks xmllint whether it is well-formed, failing the test with what
 * ("the plot") when not; says SKIP without xmllint. */
void svg_check_well_formed(const char *svg, const char *what);

#endif

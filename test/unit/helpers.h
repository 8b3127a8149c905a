/*
 * Small file helpers the unit tests share (linked into every test, as
 * every non-test_ file here is).  Test code, runs offline only.
 */
#ifndef GP_TEST_HELPERS_H
#define GP_TEST_HELPERS_H

/* Whether the file at path holds exactly want (up to 255 bytes); 0 when it cannot be read. */
int helpers_file_is(const char *path, const char *want);

/* Write text as the whole file at path (created or truncated); failures are the caller's checks. */
void helpers_put(const char *path, const char *text);

#endif

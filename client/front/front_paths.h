/* Path text as the full CLI computes it with std::filesystem (client/cli/preload_library.cpp,
 * client/cli/command_run.cpp), so that a path the front puts into the program's environment is the
 * same string the full CLI would have put there. Every function returns a string the caller frees,
 * or NULL when memory runs out. Thread safety: free functions; front_own_directory reads
 * /proc/self/exe. */
#ifndef JITCACHE_CLIENT_FRONT_FRONT_PATHS_H
#define JITCACHE_CLIENT_FRONT_FRONT_PATHS_H

/* std::filesystem::absolute(path), or `path` unchanged where that fails (an empty path, no current
 * directory): the current directory joined to a relative path, an absolute path as it is. */
char* front_absolute(const char* path);

/* front_absolute(path).lexically_normal(), or `path` unchanged where front_absolute fails: one
 * separator between names, no "." and no "name/.."; a trailing separator stays where the path
 * ended in a separator, "." or "..". */
char* front_absolute_normal(const char* path);

/* The directory of the running executable (/proc/self/exe's parent), or NULL when it cannot be
 * read. */
char* front_own_directory(void);

/* `left`, then `separator` (none where it is '\0'), then `right`: the one concatenation the front's
 * paths and environment entries ("NAME=value") are made of. */
char* front_concat(const char* left, char separator, const char* right);

/* `directory` "/" `name`. */
char* front_join(const char* directory, const char* name);

#endif

/* A plugin built twice (RELOAD_PLUGIN_VERSION 1 and 2) for plugin_reload.c: the version a program
 * finds tells which build is loaded. */
__attribute__((visibility("default"))) int reload_plugin_version(void) { return RELOAD_PLUGIN_VERSION; }

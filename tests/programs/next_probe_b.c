/* The second definition of probe_name (next_probe_a.c says why). */
const char* probe_name(void) { return "b"; }

/* Referenced by route_resolvers so that the link keeps this library (--as-needed). */
int next_probe_b_linked(void) { return 1; }

#include <low/low.hpp>

int low_value() { return 1; }

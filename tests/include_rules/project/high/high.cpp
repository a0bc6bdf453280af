#include <high/high.hpp>

int high_value() { return low_value() + 1; }

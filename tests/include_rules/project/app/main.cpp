// Uses high, and through it low: what a used target uses may be included too.
#include <high/high.hpp>
#include <low/low.hpp>

int main() { return high_value() + low_value() == 3 ? 0 : 1; }

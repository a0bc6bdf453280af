// Uses low (USES low in CMakeLists.txt).
#pragma once

#include <low/low.hpp>

int high_value();
